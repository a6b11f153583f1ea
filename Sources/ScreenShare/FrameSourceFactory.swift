import Foundation
public import Logging
import ScreenCapturePipeWire
import ScreenCaptureX11
public import ScreenMedia

/// Makes a share's frame source from its ``CaptureSource`` on the capture thread (display connections and
/// PipeWire streams belong to the thread that made them), with a description for the log. The system's
/// factory opens X11, PipeWire or the portal; tests give one that makes a test pattern.
public struct FrameSourceFactory: Sendable {
    public typealias Make = @Sendable (_ source: CaptureSource, _ stop: StopSignal) throws -> (source: any FrameSource, description: String)
    let make: Make
    /// Called when the share ends (the portal's grant is closed).
    let close: @Sendable () -> Void

    public init(make: @escaping Make, close: @escaping @Sendable () -> Void = {}) {
        self.make = make
        self.close = close
    }

    /// X11 (MIT-SHM), a PipeWire node, or what the ScreenCast portal grants (asked once per share).
    public static func system(logger: Logger) -> FrameSourceFactory {
        let portal = PortalGrant(logger: logger)
        return FrameSourceFactory(
            make: { source, stop in
                let (made, description) = try makeSystemFrameSource(source, portal: portal, stop: stop, logger: logger)
                return (made, description)
            },
            close: { portal.close() })
    }
}

/// Makes the capture's frame source on the capture thread; returns it with a description for the log.
func makeSystemFrameSource(
    _ source: CaptureSource, portal: PortalGrant, stop: StopSignal, logger: Logger
) throws -> (any FrameSource, String) {
    switch source {
    case .x11(let options):
        let capture = try XShmFrameSource(options: options, logger: logger)
        let size = capture.size
        return (
            capture,
            "\(describe(options.target)) of \(capture.displayName) (\(size.width)×\(size.height)) with \(capture.usesSharedMemory ? "MIT-SHM" : "XGetImage")"
        )
    case .pipeWireNode(var options):
        if case .fileDescriptor(let inherited) = options.remote {
            // The source takes its descriptor over; a copy keeps the inherited one for later restarts (SIGHUP).
            let copy = fcntl(inherited, F_DUPFD_CLOEXEC, 0)
            guard copy >= 0 else {
                throw PipeWireCaptureError(.noDaemon, "--pipewire-remote \(inherited): \(String(cString: strerror(errno)))")
            }
            options.remote = .fileDescriptor(copy)
        }
        let capture = try PipeWireFrameSource(options: options, logger: logger)
        return (capture, "PipeWire node \(options.nodeID) (\(capture.size.width)×\(capture.size.height))")
    case .portal(let request):
        let capture = try portal.frameSource(request, stop: stop)
        return (capture, "the screen cast granted by the portal, PipeWire node \(capture.options.nodeID) (\(capture.size.width)×\(capture.size.height))")
    }
}

/// The ScreenCast portal's grant for this run: asked for at the first capture, kept across capture
/// restarts (a reload opens a new PipeWire connection on it), asked for again — silently, with the restore
/// token — when its stream has ended, and closed at the end.
final class PortalGrant: Sendable {
    private let session = Locked<ScreenCastPortalSession?>(nil)
    private let logger: Logger

    init(logger: Logger) { self.logger = logger }

    /// A PipeWire source on the granted node (on the capture thread: this may wait for the user).
    func frameSource(_ request: ScreenCastPortalRequest, stop: StopSignal) throws -> PipeWireFrameSource {
        if let existing = session.value {
            do {
                return try source(on: existing, request)
            } catch {
                // The screen cast ended (stopped from the desktop, or the compositor restarted): ask again.
                logger.info("the screen cast has ended (\(error)); asking the portal again")
                close()
            }
        }
        let granted = try ScreenCastPortalSession(request, logger: logger, shouldStop: { stop.isStopped })
        session.withLock { $0 = granted }
        return try source(on: granted, request)
    }

    /// Captures the grant's node on a new PipeWire connection from the portal.
    private func source(on grant: ScreenCastPortalSession, _ request: ScreenCastPortalRequest) throws -> PipeWireFrameSource {
        try PipeWireFrameSource(
            options: PipeWireCaptureOptions(
                remote: .fileDescriptor(try grant.openPipeWireRemote()), nodeID: grant.nodeID, drawsCursor: request.cursor != .hidden,
                expectsCursorMetadata: grant.cursorAsMetadata && request.cursor != .hidden, mask: request.mask),
            logger: logger)
    }

    func close() {
        session.withLock { current in
            current?.close()
            current = nil
        }
    }
}

