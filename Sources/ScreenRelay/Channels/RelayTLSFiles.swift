/// The PEM files of a relay that serves HTTPS and WSS: the certificate chain (leaf first) and its private key.
public struct RelayTLSFiles: Sendable, Equatable {
    public var certificateChain: String
    public var privateKey: String

    public init(certificateChain: String, privateKey: String) {
        self.certificateChain = certificateChain
        self.privateKey = privateKey
    }
}
