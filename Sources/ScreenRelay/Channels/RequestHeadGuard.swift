import HummingbirdCore
import NIOCore
import NIOHTTP1

/// Times and measures every request head a connection sends, in front of HTTP's decoder, so that a client holding
/// no token can neither keep a socket with a head that never ends nor make the relay keep a head larger than its
/// limits:
///
/// - Each head has ``Limits/timeout`` to arrive whole (its TLS handshake included, for the first): the first from
///   the connection's start, each later one on a kept-alive connection from its first byte. Between requests the
///   connection is HTTP's, closed after the idle timeout; a WebSocket, once upgraded, is its pings' (the guard
///   leaves the pipeline).
/// - A request line past ``RequestHeadScanner/Limits/requestLine`` is answered 414, header fields past
///   ``RequestHeadScanner/Limits/headerFields`` 431, each with a sentence, and the connection closes. The bytes
///   past the limit never reach the decoder: it holds at most the limits of an unfinished head.
/// - A head the decoder cannot read, before Hummingbird has the connection (which answers later ones itself), is
///   answered 400 and the connection closes.
///
/// A refused connection's output is closed after its answer, and what it still sends is read and dropped until it
/// closes, sends nothing for ``Limits/lingerIdle`` or has been read for ``Limits/lingerMost`` (nginx's lingering
/// close: 5 s and 30 s there), so that the answer is not lost to a reset; then it is cut.
/// The ``Observer`` behind the decoder says when the decoder has made a request of a head, when a request has
/// ended and when its answer has been written.
final class RequestHeadGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    struct Limits: Sendable {
        /// Time for one head to arrive whole.
        var timeout: TimeAmount
        var size: RequestHeadScanner.Limits
        /// How long a refused connection is read, and dropped, after its answer: until it sends nothing for the
        /// first, and at most the second.
        var lingerIdle: TimeAmount = .seconds(2)
        var lingerMost: TimeAmount = .seconds(10)

        /// The HTTP decoder's own limits, set above these so that these are met first (the decoder counts names
        /// and values only; it also allows at most 1 000 header fields, past which the head is answered 431 too).
        var decoderConfiguration: HTTP1Channel.Configuration.DecoderConfiguration {
            let most = max(80 << 10, size.requestLine + size.headerFields)
            return .init(maxHeaderFieldSize: most, maxHeaderListSize: most)
        }
    }

    private enum State {
        /// A head is arriving: counted and timed, and held here (its bytes so far, from the second read on) until
        /// it ends.
        case head(RequestHeadScanner, held: ByteBuffer?)
        /// Its empty line has come: still timed, until the decoder has made a request of it.
        case decoding
        /// Its body and its answer: not this guard's.
        case request
        /// Between requests: HTTP's idle timeout.
        case between
        /// Answered and closing: what comes is dropped.
        case refused
    }

    enum Refusal: Equatable {
        case requestLine, headerFields, malformed
    }

    let limits: Limits
    let metrics: RelayMetrics
    /// Heads refused for their size, said at most once a minute.
    let log: RateLimitedLog
    private var state: State
    /// The head's deadline, or the end of a refused connection's lingering; and the end of its lingering when it
    /// sends nothing more.
    private var timer: Scheduled<Void>?
    private var lingerIdle: Scheduled<Void>?
    private var context: ChannelHandlerContext?
    /// Whether Hummingbird serves the connection's requests (its first was no WebSocket upgrade): from then on it
    /// answers a request the decoder cannot read itself.
    private var servedByHTTP = false
    /// Requests decoded whose answer has not been written whole.
    private var unanswered = 0

    init(limits: Limits, metrics: RelayMetrics, log: RateLimitedLog) {
        self.limits = limits
        self.metrics = metrics
        self.log = log
        state = .head(RequestHeadScanner(limits: limits.size), held: nil)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        startDeadline(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        lingerIdle?.cancel()
        lingerIdle = nil
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch state {
        case .refused:
            lingerIdle?.cancel()
            lingerIdle = Self.close(context, in: limits.lingerIdle)
            return
        case .between:
            state = .head(RequestHeadScanner(limits: limits.size), held: nil)
            startDeadline(context)
        case .head, .decoding, .request:
            break
        }
        guard case .head(var scanner, var held) = state else {
            context.fireChannelRead(data)
            return
        }
        // The held bytes' only reference is `held` while they grow (not copied on write).
        state = .decoding
        let buffer = unwrapInboundIn(data)
        switch buffer.withUnsafeReadableBytes({ scanner.scan($0) }) {
        case .unfinished:
            Self.hold(buffer, in: &held)
            state = .head(scanner, held: held)
        case .ended:
            state = .decoding
            // Last: the decoder may call back (``headDecoded()``, ``requestEnded()``) before this returns.
            if var held {
                held.writeImmutableBuffer(buffer)
                context.fireChannelRead(wrapInboundOut(held))
            } else {
                context.fireChannelRead(data)
            }
        case .tooLong(let part):
            refuse(context, part == .requestLine ? .requestLine : .headerFields)
        }
    }

    /// Adds the bytes of an unfinished head to those held, in room that grows by half at most: what a connection
    /// holds is its head's bytes, within the limits, and not the room of the buffers they were read into (up to
    /// 64 KiB each), nor what HTTP's decoder would make of them before the head is whole.
    private static func hold(_ buffer: ByteBuffer, in held: inout ByteBuffer?) {
        guard var bytes = held else {
            var copy = ByteBufferAllocator().buffer(capacity: buffer.readableBytes)
            copy.writeImmutableBuffer(buffer)
            held = copy
            return
        }
        held = nil
        if bytes.writableBytes < buffer.readableBytes {
            bytes.reserveCapacity(max(bytes.writerIndex + buffer.readableBytes, bytes.capacity + bytes.capacity / 2))
        }
        bytes.writeImmutableBuffer(buffer)
        held = bytes
    }

    private func startDeadline(_ context: ChannelHandlerContext) {
        timer?.cancel()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: limits.timeout) { [metrics] in
            metrics.refused(.requestHeadTimeout)
            loopBound.value.close(promise: nil)
        }
    }

    // MARK: What the decoder made of the bytes (from the ``Observer``, on the connection's event loop)

    /// The decoder has made a request of a head: its deadline is met.
    func headDecoded() {
        servedByHTTP = true
        unanswered += 1
        if case .refused = state { return }
        timer?.cancel()
        timer = nil
        state = .request
    }

    /// A request has been read whole: the next byte starts the next head.
    func requestEnded() {
        if case .request = state { state = .between }
    }

    /// A request's answer has been written whole.
    func answerEnded() {
        unanswered = max(0, unanswered - 1)
    }

    /// The decoder could not read a head; true when it is answered here (before Hummingbird has the connection),
    /// false when it is Hummingbird's to answer.
    func decoderFailed(_ error: HTTPParserError) -> Bool {
        if case .refused = state { return true }
        guard !servedByHTTP, let context else { return false }
        // Its own limits (more than 1 000 header fields) are the only overflow it meets before these.
        refuse(context, error == .headerOverflow ? .headerFields : .malformed)
        return true
    }

    // MARK: Refusing

    private func refuse(_ context: ChannelHandlerContext, _ refusal: Refusal) {
        state = .refused
        timer?.cancel()
        let peer = context.channel.remoteAddress?.ipAddress ?? "?"
        switch refusal {
        case .requestLine:
            metrics.refused(.requestLineSize)
            log.log("refused a request from \(peer) whose request line is longer than \(Self.size(limits.size.requestLine)) (414, max-request-line)")
        case .headerFields:
            metrics.refused(.requestHeadSize)
            log.log("refused a request from \(peer) whose header fields are longer than \(Self.size(limits.size.headerFields)) (431, max-request-headers)")
        case .malformed:
            metrics.add(.protocolErrors)
        }
        timer = Self.close(context, in: limits.lingerMost)
        lingerIdle = Self.close(context, in: limits.lingerIdle)
        // Mid-answer (a client that sends its next request before the last is answered) nothing can be said in
        // order: closed at once.
        guard unanswered == 0 else {
            context.close(promise: nil)
            return
        }
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(Self.response(refusal, limits: limits.size))).whenSuccess {
            loopBound.value.close(mode: .output, promise: nil)
        }
    }

    private static func close(_ context: ChannelHandlerContext, in delay: TimeAmount) -> Scheduled<Void> {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        return context.eventLoop.scheduleTask(in: delay) { loopBound.value.close(promise: nil) }
    }

    /// The whole answer to a refused head: its status, a sentence, and the close.
    static func response(_ refusal: Refusal, limits: RequestHeadScanner.Limits) -> ByteBuffer {
        let (status, sentence) =
            switch refusal {
            case .requestLine: ("414 URI Too Long", "This relay reads request lines of at most \(size(limits.requestLine)).")
            case .headerFields:
                ("431 Request Header Fields Too Large", "This relay reads at most \(size(limits.headerFields)) of request header fields.")
            case .malformed: ("400 Bad Request", "This relay could not read the request as HTTP/1.1.")
            }
        let body = sentence + "\n"
        return ByteBuffer(
            string: "HTTP/1.1 \(status)\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
                + body)
    }

    /// "8 KiB", or the bytes when not a whole number of KiB.
    static func size(_ bytes: Int) -> String {
        bytes % 1024 == 0 ? "\(bytes / 1024) KiB" : "\(bytes) bytes"
    }

    /// Placed behind HTTP's decoder (and its WebSocket upgrade): tells the guard when the decoder has made a
    /// request of a head, when a request has ended and when its answer has been written, and hands it the
    /// decoder's failures to read a head.
    final class Observer: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias InboundOut = HTTPServerRequestPart
        typealias OutboundIn = HTTPServerResponsePart
        typealias OutboundOut = HTTPServerResponsePart

        let headGuard: RequestHeadGuard

        init(_ headGuard: RequestHeadGuard) {
            self.headGuard = headGuard
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head: headGuard.headDecoded()
            case .end: headGuard.requestEnded()
            case .body: break
            }
            context.fireChannelRead(data)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            if case .end = unwrapOutboundIn(data) { headGuard.answerEnded() }
            context.write(data, promise: promise)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            if let failure = error as? HTTPParserError, headGuard.decoderFailed(failure) { return }
            context.fireErrorCaught(error)
        }
    }
}
