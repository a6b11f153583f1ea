import NIOCore
import NIOWebSocket

/// Watches what a WebSocket's client sends, frame by frame, just after the decoder (one cast a frame; a frame
/// passes on as it came):
/// - a frame without a mask closes the connection (RFC 6455 §5.1: a server must), with a close frame that says why
///   (1002, protocol error). Masking keeps a client's bytes from reading as another protocol to the proxies between
///   it and the relay; every browser and WebSocket library masks.
/// - the client's close tells the connection's writer to write nothing more (``whenClosing(_:)``): after a close
///   nothing more may be sent (§5.5.1), and a client that reads slowly would otherwise be sent all that was queued
///   for it before hummingbird-websocket's answer to its close got its turn.
///
/// Installed as the upgrade to a WebSocket completes, before the decoder hands on its first frame
/// (``RelayChildChannel``), so that no frame gets past it.
final class ClientFrameWatch: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    // @unchecked Sendable: `closing` and `onClosing` are read and set only on the channel's event loop (pipeline
    // events, and ``whenClosing(_:)``, which the writer calls there).
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    static let unmaskedReason = "frames from a client must be masked (RFC 6455 §5.1)"

    /// The client closed, or was refused: nothing more is to be written.
    private var closing = false
    private var onClosing: (() -> Void)?

    /// Puts one just after the pipeline's WebSocket frame decoder (on the channel's event loop).
    static func install(in pipeline: ChannelPipeline.SynchronousOperations) throws {
        let decoder = try pipeline.handler(type: ByteToMessageHandler<WebSocketFrameDecoder>.self)
        try pipeline.addHandler(ClientFrameWatch(), position: .after(decoder))
    }

    /// Calls `action` when the client closes or is refused (at once if it did already). On the channel's event loop.
    func whenClosing(_ action: @escaping () -> Void) {
        if closing { action() } else { onClosing = action }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard frame.maskKey != nil else { return refuseUnmasked(context: context) }
        if frame.opcode == .connectionClose {
            close()
            // The answer to its close goes within the departure grace, or the connection is cut: a client that
            // closes and then reads nothing would otherwise keep its connection until it is found not reading.
            let channel = context.channel
            context.eventLoop.scheduleTask(in: TimeAmount(ConnectionDriver.departureGrace)) { channel.close(promise: nil) }
        }
        context.fireChannelRead(data)
    }

    private func close() {
        guard !closing else { return }
        closing = true
        onClosing?()
        onClosing = nil
    }

    private func refuseUnmasked(context: ChannelHandlerContext) {
        guard !closing else { return }
        close()
        var payload = context.channel.allocator.buffer(capacity: 2 + Self.unmaskedReason.utf8.count)
        payload.write(webSocketErrorCode: .protocolError)
        payload.writeString(Self.unmaskedReason)
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, data: payload)
        context.writeAndFlush(wrapOutboundOut(frame)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}
