import HTTPTypes

extension HTTPField.Name {
    /// RFC 7239's header, by which a proxy names the client it forwards.
    static let forwarded = field("Forwarded")
    static let xForwardedFor = field("X-Forwarded-For")
    /// The scheme a TLS proxy in front was reached by.
    static let xForwardedProto = field("X-Forwarded-Proto")
    static let referrerPolicy = field("Referrer-Policy")

    /// A field name HTTPTypes does not name. Each of the above is a token, which `HTTPField.Name` always accepts.
    private static func field(_ name: String) -> HTTPField.Name {
        guard let field = HTTPField.Name(name) else { preconditionFailure("\"\(name)\" is not an HTTP field name (RFC 9110 token)") }
        return field
    }
}
