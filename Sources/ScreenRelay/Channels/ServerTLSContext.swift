import Foundation
import NIOCore
import NIOSSL
import ScreenMedia

/// The TLS context each new connection starts with. ``reload()`` reads the files again: a renewed certificate
/// serves the connections that come after it, while those already open keep theirs (no viewer is dropped).
final class ServerTLSContext: Sendable {
    let files: RelayTLSFiles
    private let current: Locked<NIOSSLContext>

    init(files: RelayTLSFiles) throws(RelayError) {
        self.files = files
        current = Locked(try Self.load(files))
    }

    var context: NIOSSLContext { current.value }

    /// Reads the files again; on failure the context in use stays.
    func reload() throws(RelayError) {
        let fresh = try Self.load(files)
        current.withLock { $0 = fresh }
    }

    static func load(_ files: RelayTLSFiles) throws(RelayError) -> NIOSSLContext {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(files.certificateChain)
        } catch {
            throw RelayError(.badCertificate, "cannot read a PEM certificate from \(files.certificateChain): \(Self.reason(error, path: files.certificateChain))")
        }
        guard let leaf = chain.first else {
            throw RelayError(.badCertificate, "\(files.certificateChain) holds no PEM certificate")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: files.privateKey, format: .pem)
        } catch {
            throw RelayError(.badCertificate, "cannot read a PEM private key from \(files.privateKey): \(Self.reason(error, path: files.privateKey))")
        }
        if let expiry = leaf.notValidAfterDate, expiry < Date() {
            throw RelayError(.badCertificate, "the certificate in \(files.certificateChain) expired on \(ISO8601DateFormatter().string(from: expiry))")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        // TLS 1.2 and 1.3 only (as nginx by default), and for 1.2 only forward-secret AEAD suites (Mozilla's
        // "intermediate" list): TLS 1.0/1.1 and static-RSA suites such as AES128-SHA are refused at the handshake.
        configuration.minimumTLSVersion = .tlsv12
        configuration.cipherSuites = Self.forwardSecretSuites
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw RelayError(.badCertificate, "the key in \(files.privateKey) does not belong to the certificate in \(files.certificateChain)")
        }
    }

    static let forwardSecretSuites = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
        "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")

    private static func reason(_ error: any Error, path: String) -> String {
        if !FileManager.default.isReadableFile(atPath: path) {
            return FileManager.default.fileExists(atPath: path) ? "it cannot be read (permissions)" : "no such file"
        }
        return "it is not in PEM form"
    }
}

extension NIOSSLCertificate {
    /// The end of the certificate's validity.
    var notValidAfterDate: Date? {
        Date(timeIntervalSince1970: TimeInterval(notValidAfter))
    }
}
