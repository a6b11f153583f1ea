import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// Hummingbird's WebSocket request context, keeping the connection's channel: a client that stops reading is
/// dropped by closing its channel, since a WebSocket close frame would wait behind the bytes it does not read.
struct RelayRequestContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<Self>
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        channel = source.channel
    }
}
