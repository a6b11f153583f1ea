import Foundation

/// A certificate authority made for one test with `openssl` (Debian's package): its certificate, and server
/// certificates it signs for chosen names. Everything lives in a temporary directory removed with it.
public final class TestCertificateAuthority: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// A signed server certificate and its key, as PEM files.
    public struct Issued: Sendable {
        public let certificate: String
        public let key: String
        /// The SHA-256 of its public key, base64 (Chromium's `--ignore-certificate-errors-spki-list`).
        public let publicKeyHash: String
    }

    public let directory: String
    /// The CA's certificate (PEM): what a client passes as `--ca-file`.
    public let certificate: String
    private let key: String

    public init(name: String = "screenpub test CA") async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("test-ca-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        certificate = directory + "/ca.pem"
        key = directory + "/ca.key"
        try await Self.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", certificate,
            "-days", "30", "-subj", "/CN=\(name)", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A server certificate for `names` (host names and IP addresses), valid from now for `days`.
    public func issue(for names: [String] = ["localhost", "127.0.0.1"], days: Int = 30, label: String = "server") async throws -> Issued {
        let base = "\(directory)/\(label)"
        let alternativeNames = names.map { name in
            name.allSatisfy { $0.isNumber || $0 == "." } || name.contains(":") ? "IP:\(name)" : "DNS:\(name)"
        }.joined(separator: ",")
        try """
            subjectAltName=\(alternativeNames)
            basicConstraints=CA:FALSE
            keyUsage=critical,digitalSignature
            extendedKeyUsage=serverAuth

            """.write(toFile: base + ".ext", atomically: true, encoding: .utf8)
        try await Self.openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", base + ".key", "-out", base + ".csr",
            "-subj", "/CN=\(names.first ?? "localhost")",
        ])
        try await Self.openssl([
            "x509", "-req", "-in", base + ".csr", "-CA", certificate, "-CAkey", key, "-CAcreateserial", "-out", base + ".pem",
            "-days", String(days), "-extfile", base + ".ext",
        ])
        // The SPKI hash: the public key in DER, hashed, in base64.
        try await Self.openssl(["pkey", "-in", base + ".key", "-pubout", "-outform", "DER", "-out", base + ".spki"])
        try await Self.openssl(["dgst", "-sha256", "-binary", "-out", base + ".spki.sha256", base + ".spki"])
        let digest = try Data(contentsOf: URL(fileURLWithPath: base + ".spki.sha256"))
        return Issued(certificate: base + ".pem", key: base + ".key", publicKeyHash: digest.base64EncodedString())
    }

    @discardableResult
    private static func openssl(_ arguments: [String]) async throws -> String {
        let outcome = try await ChildProcess.run("/usr/bin/openssl", arguments, timeout: 30)
        guard outcome.status == 0 else {
            throw Failure(description: "openssl \(arguments.prefix(2).joined(separator: " ")) failed: \(outcome.standardError.suffix(500))")
        }
        return outcome.standardOutput
    }
}
