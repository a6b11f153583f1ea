import Foundation
import Logging
import NIOCore
import ScreenMedia
import ScreenTransport
import ScreenWire

/// Serves each client of the relay, whatever carries it (a WebSocket, ``WebSocketRoutes``, or the in-process
/// transport, ``RelayServer/inProcessTransport``): the driver of its ``RelayConnection``, its ``ConnectionOutlet``
/// and its writer.
struct ConnectionDriver: Sendable {
    let registry: SessionRegistry
    let tokens: TokenAuthority
    let metrics: RelayMetrics
    /// The bounds of each connection's queue.
    let outletLimits: ConnectionOutlet.Limits
    /// What all connections have queued, and its ceiling (``RelayConfiguration/maximumRelayQueuedBytes``).
    let queuedBytes: QueuedBytesBudget
    /// Connections closed because they do not read, said once a minute with the number of the others.
    let unreadClientsLog: RateLimitedLog

    /// Seconds a new connection has to send `hello`.
    static let helloTimeout: Double = 10
    /// How long a client the relay closes has to answer the close before its connection is cut.
    static let closeGrace = Duration.seconds(10)
    /// How long a client that went with a close keeps its connection: the answer to its close goes within it,
    /// unless it does not read. One that shut its end of the socket or reset it keeps none.
    static let departureGrace = Duration.seconds(5)
    /// The longest a connection's timer sleeps at once (seconds), so that a cancelled sleep's timer is soon gone.
    static let longestTimerSleep: Double = 60

    /// Runs `drop` after `grace` (it closes a connection that may already be gone: closing twice is harmless).
    static func drop(after grace: Duration, _ drop: @escaping @Sendable () -> Void) {
        Task {
            try? await Task.sleep(for: grace)
            drop()
        }
    }

    /// How what a client is sent reaches it.
    enum Output: Sendable {
        /// A WebSocket's channel, written from its event loop (``ChannelOutletWriter``).
        case channel(any Channel)
        /// Message by message, by a task (the in-process transport).
        case messages(@Sendable (RelayMessage) async throws -> Void)

        var channel: (any Channel)? { if case .channel(let channel) = self { channel } else { nil } }

        /// Writes a message where there is no channel (a channel's messages are its writer's).
        func write(_ message: RelayMessage) async throws {
            if case .messages(let write) = self { try await write(message) }
        }
    }

    /// Serves one client, whatever carries it (a WebSocket, or the in-process transport): drives its
    /// ``RelayConnection`` with what it sends and the time, joins it to the session its hello names, feeds its
    /// messages to the session and writes what the session sends it, in order, with the transport's
    /// backpressure. Returns when the connection has ended.
    func serve(
        inbound: RelayInbound, output: Output, close: @escaping @Sendable (WireErrorCode, String) async throws -> Void,
        drop: @escaping @Sendable () -> Void = {}, joinedAs: @escaping @Sendable (Role) -> Void = { _ in },
        link: LinkControl? = nil, logger connectionLogger: Logger
    ) async {
        let connectionId = "c" + SessionRegistry.newIdentifier().prefix(12)
        let outlet = ConnectionOutlet(limits: outletLimits, relay: queuedBytes, metrics: metrics, link: link)
        let machine = Locked(RelayConnection(now: Date().timeIntervalSince1970, helloTimeout: Self.helloTimeout))
        let joined = Locked<SessionHub?>(nil)
        // The writer: everything this client is sent, in order, with backpressure from the transport. It drains
        // the queue (an error and a close included) and then ends. It is stopped only when the client let its
        // queue overflow: its socket may never take another byte, and what was queued for it is dropped.
        // A WebSocket's channel is written from its event loop (``ChannelOutletWriter``); another transport's by a task.
        let channelWriter = output.channel.map { channel in
            ChannelOutletWriter(
                outlet: outlet, channel: channel,
                delivered: { streamId, bytes, isAudio in
                    joined.value?.noteDelivery(to: connectionId, streamId: streamId, bytes: bytes, isAudio: isAudio)
                })
        }
        if let channelWriter {
            do {
                try await channelWriter.install()
            } catch {
                channelWriter.stop()
            }
        }
        let writer = Task {
            if let channelWriter {
                guard let closing = await channelWriter.ended() else { return }
                // A client that does not answer the close (or is stuck mid-message) is cut off after a grace.
                Self.drop(after: Self.closeGrace, drop)
                try? await close(closing.code, closing.reason)
                return
            }
            do {
                while let item = await outlet.next() {
                    defer { outlet.sent(item) }
                    switch item {
                    case .frame(let buffer, let streamId, let flags):
                        try await output.write(.binary(flags.map { buffer.replacingFrameFlags($0) } ?? buffer))
                        joined.value?.noteDelivery(to: connectionId, streamId: streamId, bytes: buffer.readableBytes, isAudio: false)
                    case .audio(let buffer, let streamId):
                        try await output.write(.binary(buffer))
                        joined.value?.noteDelivery(to: connectionId, streamId: streamId, bytes: buffer.readableBytes, isAudio: true)
                    case .control(let text):
                        try await output.write(.text(text))
                    case .close(let code, let reason):
                        // A client that does not answer the close (or is stuck mid-message) is cut off after a grace.
                        Self.drop(after: Self.closeGrace, drop)
                        try await close(code, reason)
                        return
                    }
                }
            } catch {
                connectionLogger.debug("writing to \(connectionId) failed: \(error)")
            }
        }
        /// The client does not read what it is sent: its writer and connection go now, with what was queued.
        @Sendable func dropUnreadClient(_ reason: String) {
            metrics.add(.overflowCloses)
            // One line a minute with the count: a token's connections that never read could otherwise write a line each.
            unreadClientsLog.log("closing a client that does not read (\(connectionId)): \(reason)")
            // (A channel's writer ends as the channel closes; it is not named here: the outlet keeps this action, and
            // the writer the outlet and its channel.)
            writer.cancel()
            drop()
        }
        // The hello deadline and the token's expiry: one timer at a time, at the machine's next deadline.
        let timer = Locked<(deadline: Double?, task: Task<Void, Never>?)>((nil, nil))
        defer { timer.withLock { $0.task?.cancel() } }
        @Sendable func scheduleTimer() {
            let deadline = machine.value.nextDeadline
            timer.withLock { timer in
                guard timer.deadline != deadline else { return }
                timer.task?.cancel()
                timer.deadline = deadline
                timer.task = deadline.map { deadline in
                    Task {
                        // In slices of at most a minute: a sleep cancelled when its connection ends keeps its timer
                        // in the runtime until the time it was for (Swift 6.3 on Linux), and a token's expiry may be
                        // 30 days away: a few hundred bytes for each connection that said hello, for that long.
                        while !Task.isCancelled {
                            let wait = deadline - Date().timeIntervalSince1970
                            guard wait > 0 else { break }
                            try? await Task.sleep(for: .milliseconds(Int(min(wait, Self.longestTimerSleep) * 1000) + 1))
                        }
                        if !Task.isCancelled { await perform(machine.withLock { $0.tick(now: Date().timeIntervalSince1970) }) }
                    }
                }
            }
        }
        /// Carries out what the connection's machine answered, then sets the timer for what it waits for next.
        @Sendable func perform(_ actions: [RelayConnection.Action]) async {
            defer { scheduleTimer() }
            for action in actions {
                switch action {
                case .verify(let token):
                    let verdict = await verdict(token)
                    await perform(machine.withLock { $0.tokenVerdict(verdict) })
                case .join(let grant):
                    guard let hub = await registry.hub(grant.sessionId) else {
                        await perform(machine.withLock { $0.tokenVerdict(.failure(Self.sessionGone)) })
                        continue
                    }
                    joined.withLock { $0 = hub }
                    joinedAs(grant.role)
                    await hub.join(
                        ConnectionInfo(connectionId: connectionId, role: grant.role, data: grant.connectionData), token: grant.tokenId, outlet: outlet)
                case .control(let control): await joined.value?.control(control, from: connectionId)
                case .video(let buffer, let header): await joined.value?.media(buffer, header: header, from: connectionId)
                case .audio(let buffer, let header): await joined.value?.audio(buffer, header: header, from: connectionId)
                case .refuse(let error, let reason, let counted):
                    if let counted { metrics.add(counted) }
                    outlet.yield(.control(ControlMessage.error(code: error.kind, message: error.message).encoded()))
                    outlet.yield(.close(error.kind, reason))
                    // The error and the close are written within the close's grace, or the connection is cut: a
                    // client that does not read (busy sending pings, say) is not kept waiting for them.
                    Self.drop(after: Self.closeGrace, drop)
                case .drop:
                    dropUnreadClient("it does not read what it is sent")
                }
            }
        }
        // At once, on the thread that overflowed the outlet: the machine only says whether it is the first time.
        outlet.onOverflow { reason in
            if case .drop? = machine.withLock({ $0.overflowed() }).first { dropUnreadClient(reason) }
        }
        scheduleTimer()
        do {
            while let message = try await inbound.next() {
                await perform(machine.withLock { $0.received(message) })
                if machine.value.isClosing { break }
            }
        } catch {
            connectionLogger.debug("connection \(connectionId) ended: \(error)")
        }
        if let hub = joined.value { await hub.leave(connectionId) }
        if machine.value.isClosing {
            // The relay's own close: the error and the close it queued are written first (within the close's grace).
            outlet.finish()
        } else {
            // The client went (its close, a reset, its end of the socket shut): nothing queued is of use to it, and
            // after a close nothing more may be sent (RFC 6455 §5.5.1). The answer to its close has a moment to go;
            // then the connection is cut, and what was on its way to the socket stops counting.
            outlet.discardQueued()
            // One that shut its end of the socket or reset it has no close to be answered (or will not read the
            // answer): its connection goes now, not after the grace.
            let peerClosed = await link?.sample()?.peerClosed ?? false
            Self.drop(after: peerClosed ? .zero : Self.departureGrace, drop)
        }
        // A client that let its queue overflow may never read again: its connection is dropped now (the
        // transport closes it when this returns), not after a write that may never complete.
        if !machine.value.isDropped { await writer.value }
        // What a writer that ended early (a failed write) left: it no longer counts against the relay's budget.
        outlet.discardQueued()
    }

    /// The verdict on a hello's token (whether its session still exists is seen when joining it).
    private func verdict(_ token: String) async -> Result<SessionGrant, WireError> {
        do throws(WireError) { return .success(try await tokens.verify(token)) } catch { return .failure(error) }
    }

    static let sessionGone = WireError(.wrongSession, "the token's session no longer exists")
}
