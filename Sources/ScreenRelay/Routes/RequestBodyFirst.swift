import Hummingbird

/// Reads a request's body (the API's are small JSON) before it is handled. A call refused before its body was
/// read (401, 403) would otherwise leave the body unread when the connection closes (`Connection: close`), and
/// the kernel answers unread data with a reset that can reach the client before the refusal does: it then sees
/// "connection reset" instead of the reason.
struct RequestBodyFirst: RouterMiddleware {
    typealias Context = RelayRequestContext
    static let maximumSize = 64 << 10

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // GETs carry no body here, and a WebSocket upgrade's must be left to the upgrade.
        guard request.method != .get, request.method != .head else { return try await next(request, context) }
        var request = request
        do {
            _ = try await request.collectBody(upTo: Self.maximumSize)
        } catch {
            throw HTTPError(.contentTooLarge, message: "request bodies here are at most \(Self.maximumSize) bytes of JSON")
        }
        return try await next(request, context)
    }
}
