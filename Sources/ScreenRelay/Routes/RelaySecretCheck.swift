import Hummingbird

/// The relay secret as the HTTP API checks it: only ever in `Authorization: Bearer` (a URL ends up in logs and
/// histories), compared in a time independent of where it differs.
struct RelaySecretCheck: Sendable {
    let secret: String

    /// Whether `request` presents the relay secret.
    func isPresented(in request: Request) -> Bool {
        Self.constantTimeEqual(request.bearerToken ?? "", secret)
    }

    /// Refuses (401) a request that does not present the relay secret.
    func require(_ request: Request) throws {
        guard isPresented(in: request) else {
            throw HTTPError(.unauthorized, message: "this call needs the relay secret: Authorization: Bearer <secret>")
        }
    }

    /// Compares secrets in a time independent of where they differ.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let left = Array(a.utf8), right = Array(b.utf8)
        var difference = UInt8(left.count == right.count ? 0 : 1)
        for index in 0..<max(left.count, right.count) {
            difference |= (index < left.count ? left[index] : 0) ^ (index < right.count ? right[index] : 0)
        }
        return difference == 0
    }
}
