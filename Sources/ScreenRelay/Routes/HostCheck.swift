import Hummingbird

/// Refuses every request but `/healthz` whose `Host` the relay does not serve (421), and every WebSocket upgrade from a page of
/// another origin (Hummingbird answers a refused upgrade 400), before any route sees it; each refusal is counted (`host`, `origin`).
struct HostCheck: RouterMiddleware {
    typealias Context = RelayRequestContext
    let policy: HostPolicy
    let metrics: RelayMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // A health check says nothing but "ok", and load balancers probe it by whatever name they have.
        guard request.uri.path != "/healthz" else { return try await next(request, context) }
        guard policy.allowsHost(request.head.authority) else {
            metrics.refused(.host)
            throw HTTPError(
                .misdirectedRequest,
                message: "this relay does not answer to that host name: if it is one of its names, give it with --allowed-host or --public-url")
        }
        if request.headers[.upgrade]?.lowercased() == "websocket", !policy.allowsOrigin(request.headers[.origin]) {
            metrics.refused(.origin)
            throw HTTPError(.forbidden, message: "a WebSocket from a page of another site is refused: open the relay's own viewer")
        }
        return try await next(request, context)
    }
}
