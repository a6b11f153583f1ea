import CPipeWire
import CPipeWireShims
import CYUV
import Foundation
public import Logging
public import ScreenMedia

/// Captures a PipeWire video node (a Wayland compositor's screen cast, via the portal) into BGRA frames.
///
/// The PipeWire loop is iterated by the thread that calls ``run(framesPerSecond:stop:consumer:)`` — the
/// capture thread — so the stream's callbacks, the frame and the consumer all live on that one thread: no
/// locks and no second copy. The newest buffer is held until the tick and copied once, into the frame, only
/// where the compositor's damage metadata says the picture changed since the last copy (all of it when it
/// gives none); RGBx/RGBA are swizzled to BGRA on the way (libyuv). Compositors send buffers only when
/// something changed, so ticks without a buffer are unchanged ticks, exactly like an idle X screen:
/// keepalives and keyframe requests still work. A pointer sent as cursor metadata is drawn in.
public final class PipeWireFrameSource: FrameSource {
    public let options: PipeWireCaptureOptions
    private let logger: Logger
    private let clock = MonotonicClock()
    private let stream: PipeWireStream

    public var size: (width: Int, height: Int) { (stream.frame?.width ?? 0, stream.frame?.height ?? 0) }
    /// For logs: "PipeWire node N".
    public var displayName: String { "PipeWire node \(options.nodeID)" }

    /// Connects to the daemon and the node and waits (up to the first-frame timeout) until a format is
    /// negotiated, so that ``size`` is known and a missing node fails here; frames flow in
    /// ``run(framesPerSecond:stop:consumer:)``. Call it on the thread that will call `run`.
    public init(options: PipeWireCaptureOptions, logger: Logger) throws(PipeWireCaptureError) {
        self.options = options
        self.logger = logger
        stream = try PipeWireStream(options: options, logger: logger)
        let deadline = clock.nanoseconds(fromTicks: clock.now()) + UInt64(options.firstFrameTimeout * 1e9)
        let stream = self.stream
        let clock = self.clock
        do {
            try stream.whileEntered {
                while stream.frame == nil {
                    guard clock.nanoseconds(fromTicks: clock.now()) < deadline else {
                        throw PipeWireCaptureError(
                            .noFrames,
                            "PipeWire node \(options.nodeID) agreed on no video format within \(options.firstFrameTimeout) s (state: \(stream.stateDescription))")
                    }
                    try stream.iterate(timeoutMilliseconds: 100)
                }
            }
        } catch let error as PipeWireCaptureError {
            throw error
        } catch {
            throw PipeWireCaptureError(.streamFailed, "\(error)")
        }
    }

    public func run(framesPerSecond: Double, stop: StopSignal, consumer: any FrameConsumer) throws {
        var schedule = TickSchedule(framesPerSecond: framesPerSecond, clock: clock)
        let timeout = UInt64(options.firstFrameTimeout * 1e9)
        // The first picture is waited for from the start; a later one, from when a new size took the picture away.
        var wait: PictureWait? = PictureWait(since: clock.nanoseconds(fromTicks: clock.now()), newSize: nil)
        try stream.whileEntered {
            while !stop.isStopped {
                // Serve PipeWire until the tick is due (at most 100 ms at a time, to notice a stop).
                let now = clock.nanoseconds(fromTicks: clock.now())
                if now < schedule.nextDeadline {
                    let milliseconds = Int32(min(100, (schedule.nextDeadline - now + 999_999) / 1_000_000))
                    try stream.iterate(timeoutMilliseconds: milliseconds)
                    continue
                }
                try stream.iterate(timeoutMilliseconds: 0)
                stream.takeHeldPicture()
                if let frame = stream.frame, stream.hasPicture {
                    wait = nil
                    if stream.pictureChanged {
                        try consumer.consume(frame, sizeChanged: stream.takeSizeChange())
                        stream.pictureConsumed()
                    } else {
                        try consumer.consumeUnchanged(frame, at: clock.mediaTime(fromTicks: clock.now()))
                    }
                } else {
                    var waiting = wait ?? PictureWait(since: now, newSize: stream.frame.map { ($0.width, $0.height) })
                    if now - waiting.since > timeout {
                        throw PipeWireCaptureError(
                            .noFrames, "PipeWire node \(options.nodeID) sent no frame within \(options.firstFrameTimeout) s" + waiting.afterWhat
                                + " (state: \(stream.stateDescription))" + waiting.whyNone)
                    }
                    if waiting.repaintIsDue(waitedNanoseconds: now - waiting.since) { askForRepaint(&waiting) }
                    wait = waiting
                }
                schedule.advance(reportingMissedTicksTo: consumer)
            }
        }
    }

    /// A static screen gives no first picture on compositors that copy only what changed (wlroots): the
    /// compositor is asked to repaint, which changes no pixel.
    private func askForRepaint(_ wait: inout PictureWait) {
        let outcome = CompositorRepaint.request()
        wait.asked(outcome)
        switch outcome {
        case .repainted:
            logger.info("no picture yet from PipeWire node \(options.nodeID) (compositors built on wlroots send one only when the screen changes): asked the compositor to repaint")
        case .unavailable(let reason), .failed(let reason):
            logger.debug("no picture yet from PipeWire node \(options.nodeID); could not ask the compositor to repaint: \(reason)")
        }
    }
}

/// Waiting for a stream's picture, its first or the first after a new size (which takes the old one away): since
/// when, when to ask the compositor to repaint (after a second, then every two), and what to tell the user if none
/// comes.
struct PictureWait {
    let since: UInt64
    /// The size negotiated anew, for a wait after a size change.
    let newSize: (width: Int, height: Int)?
    private var repaints = 0
    private var lastOutcome: CompositorRepaint.Outcome?

    init(since: UInt64, newSize: (width: Int, height: Int)?) {
        self.since = since
        self.newSize = newSize
    }

    /// What the wait followed, for the no-frame error: the start (nothing said) or a size change.
    var afterWhat: String {
        guard let newSize else { return "" }
        return " of changing its size to \(newSize.width)×\(newSize.height)"
    }

    func repaintIsDue(waitedNanoseconds waited: UInt64) -> Bool {
        if case .unavailable = lastOutcome { return false }
        return waited >= 1_000_000_000 + UInt64(repaints) * 2_000_000_000
    }

    mutating func asked(_ outcome: CompositorRepaint.Outcome) {
        repaints += 1
        lastOutcome = outcome
    }

    /// The end of the no-frame error: what was tried, and what the user can do.
    var whyNone: String {
        switch lastOutcome {
        case .repainted?:
            "; the compositor was asked to repaint and still sent no picture: it produces none for this screen cast (KWin 5.27's virtual outputs, for one, never do). Share a window instead (--portal-source window), or restart the desktop's portal backend"
        case .unavailable(let reason)?:
            "; compositors that send pictures only when the screen changes need something on it to change (\(reason), so screenpub could not ask for a repaint)"
        case .failed(let reason)?:
            "; asking the compositor to repaint failed: \(reason)"
        case nil:
            ""
        }
    }
}

@available(*, unavailable, message: "belongs to the capture thread")
extension PipeWireFrameSource: Sendable {}
