import Foundation
import NIOCore
import NIOPosix
import NIOSSL
public import ScreenMedia
public import ScreenTransport

/// The certificate authorities a client trusts for `https://` and `wss://` relays: the system's store, or
/// the PEM file of a private CA (`--ca-file`). A certificate that does not verify, or that is for another
/// host name, ends the connection with a message that says which.
public struct ClientTrust: Sendable, Equatable {
    /// A PEM file of trusted CA certificates; nil: the system's trust store.
    public var caFile: String?

    public init(caFile: String? = nil) {
        self.caFile = caFile
    }

    public static let system = ClientTrust()

    /// Checks that the CA file can be used, before anything connects.
    public func validate() throws(RelayClientError) {
        _ = try tlsConfiguration()
    }

    func tlsConfiguration() throws(RelayClientError) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let caFile {
            let certificates: [NIOSSLCertificate]
            do {
                certificates = try NIOSSLCertificate.fromPEMFile(caFile)
            } catch {
                let reason = FileManager.default.isReadableFile(atPath: caFile) ? "it holds no PEM certificate" : "it cannot be read"
                throw RelayClientError(.unreachable, "cannot use the CA file \(caFile): \(reason)")
            }
            guard !certificates.isEmpty else { throw RelayClientError(.unreachable, "the CA file \(caFile) holds no PEM certificate") }
            configuration.trustRoots = .certificates(certificates)
        }
        return configuration
    }

    /// What went wrong reaching `url`, in words: a certificate that did not verify, one for another name, a
    /// refused, reset or timed-out connection; else the error's own description.
    func explain(_ error: any Error, url: String) -> String {
        let described = String(describing: error)
        if described.contains("cannotUseIPAddressInSNI") {
            return "a wss:// relay is reached by the host name in its certificate, not by an IP address (give that name, in DNS or /etc/hosts)"
        }
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return "the relay's certificate is not for \(URLComponents(string: url)?.host ?? url) (\(extra.description))"
        }
        if described.contains("CERTIFICATE_VERIFY_FAILED") || described.contains("certificate verify failed") {
            return caFile.map { "the relay's certificate is not signed by the CA in \($0)" }
                ?? "the relay's certificate is not signed by an authority this machine trusts (for a private CA, pass --ca-file)"
        }
        if (error as? IOError)?.errnoCode == ECONNREFUSED || described.contains("Connection refused") { return "nothing listens there (connection refused)" }
        if (error as? IOError)?.errnoCode == ECONNRESET || described.contains("Connection reset by peer") {
            return "the connection was reset by the other end (a server that closed it at once, or a firewall)"
        }
        if described.contains("connectTimeout") || described.contains("ConnectTimeout") || described.contains("Connect timeout") { return "the connection timed out" }
        if let ssl = error as? NIOSSLError {
            switch ssl {
            case .handshakeFailed: return "the TLS handshake failed (is it an https:// relay?)"
            case .uncleanShutdown: return "the connection was cut during TLS"
            default: break
            }
        }
        return described
    }
}
