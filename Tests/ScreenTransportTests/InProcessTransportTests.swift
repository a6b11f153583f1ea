import Logging
import NIOCore
import ScreenTransport
import ScreenWire
import Testing

/// The in-process transport with a made-up server (an echo): messages keep their order and kind both ways, a
/// client that stops reading holds back only the server's writes to it (the pipes are bounded), and a server
/// that ends the connection ends the client's reading.
@Suite(.timeLimit(.minutes(1))) struct InProcessTransportTests {
    static let echo = InProcessTransport(endpoint: "an echo in this process") { inbound, write, close, _ in
        while let message = try? await inbound.next() {
            if case .text("bye") = message {
                try? await close(.badState, "bye")
                return
            }
            try? await write(message)
        }
    }

    @Test func messagesComeBackInOrderWithTheirKind() async throws {
        let answers = try await Self.echo.open(logger: Logger(label: "test")) { outbound, inbound in
            try await outbound.send(.text("one"))
            try await outbound.send(.binary(ByteBuffer(bytes: [1, 2, 3])))
            try await outbound.send(.text("two"))
            var answers: [String] = []
            for _ in 0..<3 {
                switch try await inbound.next() {
                case .text(let text)?: answers.append(text)
                case .binary(let buffer)?: answers.append("\(Array(buffer.readableBytesView))")
                case nil: answers.append("end")
                }
            }
            return answers
        }
        #expect(answers == ["one", "[1, 2, 3]", "two"])
    }

    /// The client sends more than the pipes hold without reading: the echo's writes wait (as on a full socket);
    /// once the client reads, everything arrives, in order.
    @Test func aClientThatDoesNotReadOnlyHoldsBackItsOwnAnswers() async throws {
        let count = 40
        let received = try await Self.echo.open(logger: Logger(label: "test")) { outbound, inbound in
            let sender = Task {
                for index in 0..<count { try await outbound.send(.text("\(index)")) }
            }
            try await Task.sleep(for: .milliseconds(100))
            var received: [String] = []
            while received.count < count, case .text(let text)? = try await inbound.next() { received.append(text) }
            try await sender.value
            return received
        }
        #expect(received == (0..<count).map(String.init))
    }

    @Test func theServerEndingTheConnectionEndsTheClientsReading() async throws {
        let last = try await Self.echo.open(logger: Logger(label: "test")) { outbound, inbound in
            try await outbound.send(.text("bye"))
            return try await inbound.next()
        }
        #expect(last == nil)
    }
}
