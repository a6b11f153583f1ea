import NIOCore

/// Closes a connection that takes none of what the relay writes to it for the idle timeout: a client that asks for
/// an HLS segment, an archive or a page and never reads the answer would otherwise keep its socket and the answer's
/// bytes (a segment of up to 16 MiB, shared with the other readers but kept for this one) as long as it likes.
/// Timed from when the channel's buffer went over its high-water mark (it holds what the socket did not take), and
/// forgotten as soon as the socket takes bytes again: a slow reader that keeps reading is never closed here (a
/// WebSocket subscriber's media is judged by the router, which closes one that takes nothing after 20 s).
final class WriteStallTimeout: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    let timeout: TimeAmount
    let metrics: RelayMetrics
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount, metrics: RelayMetrics) {
        self.timeout = timeout
        self.metrics = metrics
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            timer?.cancel()
            timer = nil
        } else if timer == nil {
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            timer = context.eventLoop.scheduleTask(in: timeout) { [metrics] in
                metrics.refused(.writeStall)
                loopBound.value.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }
}
