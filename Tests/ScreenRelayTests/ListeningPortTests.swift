import Glibc
import NIOCore
@testable import ScreenRelay
import Testing

/// Why a relay cannot listen, said as what to change; and whoever waits for its port learns it.
@Suite struct ListeningPortTests {
    @Test func eachBindFailureSaysWhatToChange() {
        func reason(_ error: any Error) -> String { ListeningPort.reason(error, host: "10.9.8.7", port: 80) }
        #expect(
            reason(IOError(errnoCode: EADDRINUSE, reason: "bind(descriptor:ptr:bytes:)"))
                == "cannot listen on 10.9.8.7:80: another program listens there already (address in use); stop it, or give another port (--port)")
        #expect(
            reason(IOError(errnoCode: EADDRNOTAVAIL, reason: "bind(descriptor:ptr:bytes:)"))
                == "cannot listen on 10.9.8.7:80: 10.9.8.7 is not an address of this machine; give one of its own (--host), or 0.0.0.0 for all")
        #expect(
            reason(IOError(errnoCode: EACCES, reason: "bind(descriptor:ptr:bytes:)"))
                == "cannot listen on 10.9.8.7:80: a port under 1024 needs root or CAP_NET_BIND_SERVICE; give a port of 1024 or more (--port)")
        struct Wrapped: Error, CustomStringConvertible { var description: String { "bind(descriptor:ptr:bytes:): Address already in use (errno: 98)" } }
        #expect(reason(Wrapped()).contains("another program listens there already"), "an error that only says its errno")
        struct Other: Error, CustomStringConvertible { var description: String { "the loop is shut down" } }
        #expect(reason(Other()) == "cannot listen on 10.9.8.7:80: the loop is shut down")
    }

    @Test func whoeverWaitsLearnsThePortOrWhyItNeverComes() async throws {
        let opened = ListeningPort()
        let port = Task { try await opened.wait() }
        opened.opened(4242)
        #expect(try await port.value == 4242)
        #expect(!opened.failed(RelayError(.cannotListen, "stopped")), "it had listened")

        let never = ListeningPort()
        let waiting = Task { try await never.wait() }
        #expect(never.failed(RelayError(.cannotListen, "cannot listen on 127.0.0.1:1: taken")))
        await #expect(throws: RelayError.self) { try await waiting.value }
        await #expect(throws: RelayError.self) { try await never.wait() }
    }
}
