import Hummingbird
import HummingbirdWebSocket
import NIOCore
import ScreenMedia

/// Hummingbird's WebSocket request context, keeping the connection's channel: a client that stops reading is
/// dropped by closing its channel, since a WebSocket close frame would wait behind the bytes it does not read.
///
/// Its ``webSocket`` handler box is held in a ``WebSocketSlot`` that the relay empties, because of a reference
/// cycle in hummingbird-websocket 2.8 (WebSocketRouter.swift, `RouterMethods.ws`): the route stores the context
/// itself in the context's own handler box (`context.webSocket.handler = Value(context: context, …)`) and nothing
/// ever empties the box. Box → context → box: every upgraded WebSocket's context stayed alive for good, and with
/// it this channel (its socket's buffers, pipeline and logger), about 4.5 KB a connection, which a client holding
/// no token could grow without end by opening and closing WebSockets.
///
/// So a context has a box only when it is an upgrade's (``WebSocketUpgradeResponder`` keeps one, for the one
/// request of the connection that the upgrade reads it after), and the box is let go of as the WebSocket's handler
/// starts (``releaseWebSocketHandler()``) or, whatever happens to the upgrade, when the channel closes. Any other
/// request (a plain GET of the WebSocket path on a kept-alive connection) fills a box of its own that nothing holds.
struct RelayRequestContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel
    private let webSocketSlot: WebSocketSlot

    /// The handler box the WebSocket route fills and the upgrade reads.
    var webSocket: WebSocketHandlerReference<Self> { webSocketSlot.reference }

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
        webSocketSlot = WebSocketSlot()
    }

    /// Gives this request a handler box that the upgrade can read once the route has filled it, until the
    /// channel closes.
    func keepWebSocketHandler() {
        webSocketSlot.keep()
        channel.closeFuture.whenComplete { [webSocketSlot] _ in webSocketSlot.release() }
    }

    /// Lets go of the handler box, and with it the copy of this context it holds: once the upgrade has read it.
    func releaseWebSocketHandler() {
        webSocketSlot.release()
    }
}

/// Where a ``RelayRequestContext`` and its copies keep their WebSocket handler box, while it is kept.
final class WebSocketSlot: Sendable {
    private let box = Locked<WebSocketHandlerReference<RelayRequestContext>?>(nil)

    /// The box kept, else a new one that nothing holds.
    var reference: WebSocketHandlerReference<RelayRequestContext> { box.value ?? WebSocketHandlerReference() }

    func keep() {
        box.withLock { if $0 == nil { $0 = WebSocketHandlerReference() } }
    }

    func release() {
        box.withLock { $0 = nil }
    }
}
