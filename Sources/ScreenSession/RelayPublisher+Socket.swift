import ScreenMedia
import ScreenTransport
import ScreenWire

extension RelayPublisher {
    /// One connection's sender: the stream as published on it, and its sequence numbers.
    struct StreamSender {
        let link: RelayLink
        var answers: AsyncStream<UInt32>.Iterator
        var renditionAnswers: AsyncStream<UInt32>.Iterator
        /// The relay takes renditions (protocol 7).
        let offersRenditions: Bool
        /// Wakes the connection's socket watcher (``watchSocket(_:wakeUps:)``).
        let socketWatch: AsyncStream<Void>.Continuation
        var published: (id: UInt32, properties: StreamProperties, revision: Int)?
        var sequence: UInt64 = 0
        var audioSequence: UInt64 = 0
        /// The second rendition as published on this connection, and its sequence numbers.
        var rendition: (id: UInt32, codec: VideoCodec)?
        var renditionSequence: UInt64 = 0
    }

    /// How often the socket is sampled while what was written to it idle drains: finer than a packet's time on a
    /// thin link (12 ms at 1 Mbit/s), coarse enough not to busy the event loop.
    static var socketSampleInterval: Duration { .milliseconds(5) }

    /// Before a picture of `bytes` is written: paces the socket at the uplink's target when that moved
    /// (``PublisherPacing/socketPacingDue()``), and notes what the socket holds, so that a picture written to an
    /// idle one is timed until it drained (``SocketDrainTimer``).
    func prepareSocket(writing bytes: Int, _ sender: StreamSender) async {
        guard let socket = sender.link.socket else { return }
        if let rate = state.withLock({ $0.pacing.socketPacingDue() }) { await socket.pace(rate) }
        let pending = await socket.sample()?.pendingBytes
        let now = seconds()
        let timing = state.withLock { state in
            state.pacing.writing(bytes: bytes, pendingBefore: pending, now: now)
            return state.pacing.timesSocket
        }
        if timing { sender.socketWatch.yield() }
    }

    /// Samples `socket` every ``socketSampleInterval`` while a stretch written to it idle is being timed, and tells
    /// the uplink controller how it drains; when that moved the target, the capture side and the socket's pacing
    /// follow at once.
    func watchSocket(_ socket: LinkControl, wakeUps: AsyncStream<Void>) async {
        for await _ in wakeUps {
            while state.withLock({ $0.pacing.timesSocket }) {
                do { try await Task.sleep(for: Self.socketSampleInterval) } catch { return }
                guard let sample = await socket.sample() else { return }
                let now = seconds()
                let (changed, rate) = state.withLock { state -> ((targetKbps: Int, uplinkKbps: Int?, reason: String)?, Double?) in
                    defer { updatePacing(state) }
                    guard state.pacing.socketSampled(pending: sample.pendingBytes, now: now) else { return (nil, nil) }
                    return (state.pacing.status(connected: true), state.pacing.socketPacingDue())
                }
                if let rate { await socket.pace(rate) }
                if let changed { logger.debug("uplink: target \(changed.targetKbps) kbit/s (\(changed.reason), from the socket)") }
            }
        }
    }
}
