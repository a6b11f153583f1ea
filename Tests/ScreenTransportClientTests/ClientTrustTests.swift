import Foundation
import NIOCore
import NIOSSL
import ScreenTesting
import ScreenTransport
import Testing

@testable import ScreenTransportClient

/// Whom a client trusts, checked before anything connects, and its failures told in words.
@Suite struct ClientTrustTests {
    /// An error whose description is `description`, as a library's error may read.
    struct Described: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    @Test func theSystemStoreAndACAFileOfCertificatesAreUsable() async throws {
        try ClientTrust.system.validate()
        let authority = try await TestCertificateAuthority()
        try ClientTrust(caFile: authority.certificate).validate()
    }

    @Test func aCAFileThatCannotBeUsedIsRefusedSayingWhy() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trust-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let missing = directory + "/missing.pem"
        let unread = #expect(throws: RelayClientError.self) { try ClientTrust(caFile: missing).validate() }
        #expect(unread?.kind == .unreachable && unread?.message == "cannot use the CA file \(missing): it cannot be read")
        for (name, contents) in [("text.pem", "not a certificate\n"), ("empty.pem", "")] {
            let path = directory + "/" + name
            try contents.write(toFile: path, atomically: true, encoding: .utf8)
            let refused = #expect(throws: RelayClientError.self) { try ClientTrust(caFile: path).validate() }
            #expect(refused?.message.contains("\(path)") == true && refused?.message.contains("holds no PEM certificate") == true, "\(String(describing: refused))")
        }
    }

    @Test func eachFailureIsToldInWords() {
        let trust = ClientTrust()
        let url = "https://relay.example:8443/session"
        #expect(trust.explain(IOError(errnoCode: ECONNREFUSED, reason: "connect"), url: url) == "nothing listens there (connection refused)")
        #expect(trust.explain(Described("connectTimeout(10 s)"), url: url) == "the connection timed out")
        #expect(trust.explain(ChannelError.connectTimeout(.seconds(10)), url: url) == "the connection timed out", "NIO's own wording")
        #expect(trust.explain(NIOSSLError.uncleanShutdown, url: url) == "the connection was cut during TLS")
        #expect(trust.explain(NIOSSLError.handshakeFailed(.sslError([])), url: url) == "the TLS handshake failed (is it an https:// relay?)")
        let otherName = trust.explain(NIOSSLExtraError.failedToValidateHostname, url: url)
        #expect(otherName.hasPrefix("the relay's certificate is not for relay.example ("), "the host, without port or path: \(otherName)")
        #expect(
            trust.explain(Described("handshakeFailed(CERTIFICATE_VERIFY_FAILED)"), url: url)
                == "the relay's certificate is not signed by an authority this machine trusts (for a private CA, pass --ca-file)")
        #expect(
            ClientTrust(caFile: "/etc/screenpub/ca.pem").explain(Described("certificate verify failed"), url: url)
                == "the relay's certificate is not signed by the CA in /etc/screenpub/ca.pem")
        #expect(trust.explain(Described("cannotUseIPAddressInSNI"), url: "wss://10.0.0.1/ws").hasPrefix("a wss:// relay is reached by the host name"))
        #expect(trust.explain(Described("Connection refused (errno: 111)"), url: url) == "nothing listens there (connection refused)")
        let reset = "the connection was reset by the other end (a server that closed it at once, or a firewall)"
        #expect(trust.explain(IOError(errnoCode: ECONNRESET, reason: "read(descriptor:pointer:size:)"), url: url) == reset)
        #expect(trust.explain(Described("read(descriptor:pointer:size:): Connection reset by peer (errno: 104)"), url: url) == reset)
        #expect(trust.explain(Described("something else went wrong"), url: url) == "something else went wrong", "anything else as it describes itself")
    }
}
