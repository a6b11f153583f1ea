import NIOCore
import NIOWebSocket
import ScreenTransport
import ScreenWire

/// Writes a WebSocket connection's outlet to its channel from the channel's own event loop: while the channel is
/// writable it takes what is queued and writes it as WebSocket frames, one flush for all it took; when the outlet
/// is empty it asks to be called again when it is not, and when the channel is full it waits for the channel to
/// say it is writable again (``channelWritabilityChanged(context:)``).
///
/// It sits just below the WebSocket frame encoder (``install()``), above TLS, and writes each frame as its header's
/// few bytes and the payload's shared buffer: what the encoder would write, without a cast of each frame through
/// the pipeline's type-erased data or the handlers above it.
///
/// A frame fanned out to a thousand subscribers is a thousand writes within milliseconds. Written by a task per
/// connection through hummingbird-websocket's writer, each cost two task switches and a hop to the event loop,
/// more than the router's work and the socket's together; here a burst costs one hop a connection.
///
/// Every message goes this way, control messages too, so that they keep their order with the frames; only the
/// closing handshake goes through hummingbird-websocket: ``ended()`` says it is due, once the frames before it
/// were written.
final class ChannelOutletWriter: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    // @unchecked Sendable: `ended` and `context` are set and read only on `channel.eventLoop` (every entry point
    // hops there first, or is a pipeline event there); `readyAgain` is set once, in init; the rest is immutable.
    typealias InboundIn = NIOAny

    private let outlet: ConnectionOutlet
    private let channel: any Channel
    /// A video or audio frame was written out.
    private let delivered: @Sendable (_ streamId: UInt32, _ bytes: Int, _ isAudio: Bool) -> Void
    /// Completed when nothing more is written, with the close that is then due (nil: none).
    private let finished: EventLoopPromise<Close?>
    /// Nothing more is written: the outlet ended, a close went, a write failed, or the writer was stopped.
    private var ended = false
    /// Its place in the pipeline, from where frames go down to the socket (nil: not in the pipeline).
    private var context: ChannelHandlerContext?
    /// What the outlet calls when it has an item again: made once (a closure a take would be allocated a frame).
    private var readyAgain: @Sendable () -> Void = {}

    init(
        outlet: ConnectionOutlet, channel: any Channel, delivered: @escaping @Sendable (UInt32, Int, Bool) -> Void
    ) {
        self.outlet = outlet
        self.channel = channel
        self.delivered = delivered
        finished = channel.eventLoop.makePromise()
        // Weakly: the outlet keeps it until called, and the channel's pipeline keeps the writer.
        readyAgain = { [weak self] in
            guard let self else { return }
            channel.eventLoop.execute { self.drain() }
        }
    }

    /// Puts it in the channel's pipeline just below the WebSocket frame encoder, and starts writing; it writes
    /// nothing more once the client closes (the pipeline's ``ClientFrameWatch`` says when).
    func install() async throws {
        try await channel.eventLoop.submit {
            let pipeline = self.channel.pipeline.syncOperations
            try pipeline.addHandler(self, position: .before(try pipeline.handler(type: WebSocketFrameEncoder.self)))
            (try? pipeline.handler(type: ClientFrameWatch.self))?.whenClosing { [weak self] in self?.end() }
            self.drain()
        }.get()
    }

    /// Writes nothing (it could not join its channel's pipeline: the channel closed meanwhile).
    func stop() { channel.eventLoop.execute { self.end() } }

    /// A close the outlet asked for: the closing handshake's code and reason.
    struct Close: Sendable {
        var code: WireErrorCode
        var reason: String
    }

    /// Waits until nothing more is written; the close then due, if the outlet asked for one.
    func ended() async -> Close? { (try? await finished.futureResult.get()) ?? nil }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { drain() }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        end()
        context.fireChannelInactive()
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        end()
    }

    /// Nothing more is written: what the outlet still holds goes (its bytes no longer count against the budgets).
    private func end(closing close: Close? = nil) {
        guard !ended else { return }
        ended = true
        outlet.discardQueued()
        finished.succeed(close)
    }

    /// Writes what is queued while the channel takes it.
    private func drain() {
        guard !ended, let context else { return }
        var wrote = false
        defer { if wrote { context.flush() } }
        while channel.isWritable {
            switch outlet.take(orWhenReady: readyAgain) {
            case .later: return
            case .ended:
                end()
                return
            case .item(let item):
                wrote = true
                write(item, context: context)
                if ended { return }
            }
        }
    }

    private func write(_ item: Outgoing, context: ChannelHandlerContext) {
        switch item {
        case .frame(let buffer, let streamId, let flags):
            writeBinary(buffer, flags: flags, item: item, context: context, delivery: Delivery(streamId: streamId, bytes: buffer.readableBytes, isAudio: false))
        case .audio(let buffer, let streamId):
            writeBinary(buffer, flags: nil, item: item, context: context, delivery: Delivery(streamId: streamId, bytes: buffer.readableBytes, isAudio: true))
        case .control(let text):
            writeMessage(opcode: .text, pieces: CollectionOfOne(ByteBuffer(string: text)), item: item, context: context, delivery: nil)
        case .close(let code, let reason):
            outlet.sent(item)
            context.flush()
            end(closing: Close(code: code, reason: reason))
        }
    }

    /// A video or audio frame, reported once written (a value: no closure allocated a frame for it).
    private struct Delivery {
        var streamId: UInt32
        var bytes: Int
        var isAudio: Bool
    }

    /// A binary message: the shared buffer in slices (its flags byte replaced in a small copy of the bytes before it).
    private func writeBinary(
        _ buffer: ByteBuffer, flags: MediaFrameHeader.Flags?, item: Outgoing, context: ChannelHandlerContext, delivery: Delivery
    ) {
        let size = WebSocketLimits.maximumFrameSize
        if let flags {
            writeMessage(opcode: .binary, pieces: buffer.framePieces(flags: flags, pieceSize: size), item: item, context: context, delivery: delivery)
        } else if buffer.readableBytes <= size {
            writeMessage(opcode: .binary, pieces: CollectionOfOne(buffer), item: item, context: context, delivery: delivery)
        } else {
            writeMessage(opcode: .binary, pieces: buffer.slices(of: size), item: item, context: context, delivery: delivery)
        }
    }

    /// One message as WebSocket frames (a continuation frame a piece after the first), their headers from this
    /// loop's ``FrameHeaderCache``; once the last frame's bytes went to the socket, the delivery is reported and
    /// the outlet told the item no longer counts, whatever became of it.
    private func writeMessage<Pieces: Collection<ByteBuffer>>(
        opcode: WebSocketOpcode, pieces: Pieces, item: Outgoing, context: ChannelHandlerContext, delivery: Delivery?
    ) {
        let headers = FrameHeaderCache.forThisThread
        var remaining = pieces.count
        var first = true
        let done = channel.eventLoop.makePromise(of: Void.self)
        for piece in pieces {
            remaining -= 1
            let header = headers.header(fin: remaining == 0, opcode: first ? opcode : .continuation, length: piece.readableBytes, allocator: context.channel.allocator)
            context.write(NIOAny(header), promise: nil)
            context.write(NIOAny(piece), promise: remaining == 0 ? done : nil)
            first = false
        }
        done.futureResult.assumeIsolated().whenComplete { [outlet, delivered, self] result in
            outlet.sent(item)
            switch result {
            case .success: if let delivery { delivered(delivery.streamId, delivery.bytes, delivery.isAudio) }
            case .failure: self.end()
            }
        }
    }
}

extension ByteBuffer {
    /// This buffer in consecutive slices of at most `size` bytes (shared storage, nothing copied).
    fileprivate func slices(of size: Int) -> [ByteBuffer] {
        stride(from: 0, to: readableBytes, by: size).compactMap { offset in
            getSlice(at: readerIndex + offset, length: Swift.min(size, readableBytes - offset))
        }
    }
}
