import Hummingbird

/// The responder of WebSocket upgrades (the first request of a connection that asks for one): the router, with a
/// handler box kept for the request (``RelayRequestContext/keepWebSocketHandler()``).
struct WebSocketUpgradeResponder<Base: HTTPResponder>: HTTPResponder where Base.Context == RelayRequestContext {
    let base: Base

    func respond(to request: Request, context: RelayRequestContext) async throws -> Response {
        context.keepWebSocketHandler()
        return try await base.respond(to: request, context: context)
    }
}
