import CPortalShims
import Foundation
public import Logging
public import ScreenMedia

/// What to ask the portal for.
public struct ScreenCastPortalRequest: Sendable, Hashable {
    public enum Sources: String, Sendable, Hashable, CaseIterable {
        /// A whole monitor.
        case monitor
        /// One window.
        case window
        /// Either; the user picks.
        case any
    }

    public enum Cursor: String, Sendable, Hashable {
        /// Drawn into the frames by the compositor.
        case embedded
        /// Not shown.
        case hidden
    }

    public var sources: Sources
    public var cursor: Cursor
    /// Where the restore token is kept between runs (read before asking, replaced after a grant); nil: none.
    public var restoreTokenFile: String?
    /// Seconds for the whole exchange, the user's answer to the dialog included.
    public var timeout: Double
    /// Its regions of the granted picture are covered in every frame.
    public var mask: PrivacyMask

    public init(
        sources: Sources = .monitor, cursor: Cursor = .embedded, restoreTokenFile: String?, timeout: Double = 300,
        mask: PrivacyMask = PrivacyMask()
    ) {
        self.sources = sources
        self.cursor = cursor
        self.restoreTokenFile = restoreTokenFile
        self.timeout = timeout
        self.mask = mask
    }

    /// Where this request's grant is kept: the token file for a monitor, with `.window` or `.any` after it for the
    /// other kinds, so that a monitor's grant is never sent when a window is asked for (a portal would restore
    /// the monitor).
    public var tokenFile: String? {
        restoreTokenFile.map { sources == .monitor ? $0 : "\($0).\(sources.rawValue)" }
    }

    /// `$XDG_STATE_HOME/screenpub/portal-restore-token` (`~/.local/state/…` without XDG_STATE_HOME).
    public static func defaultRestoreTokenFile(environment: [String: String]) -> String? {
        let state = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["HOME"].map { $0 + "/.local/state" }
        return state.map { $0 + "/screenpub/portal-restore-token" }
    }
}

/// A screen cast granted by the desktop's `org.freedesktop.portal.ScreenCast` portal: CreateSession →
/// SelectSources (persist mode 2, with the saved restore token) → Start. The grant lasts until ``close()``;
/// ``openPipeWireRemote()`` gives the connection on which ``nodeID`` can be captured, as often as needed
/// (a capture restarted by a reload opens a new one on the same grant).
///
/// The restore token is what spares the user a dialog at every start: the portal hands one out with each
/// grant (the specification makes tokens single-use, so each may differ from the last), and the latest is
/// saved, 0600, for the next start. A token the portal no
/// longer accepts makes it ask the user again; one that makes it fail outright is dropped and the user is
/// asked once more, with a log line saying so.
public final class ScreenCastPortalSession: @unchecked Sendable {
    // @unchecked: the libportal session is used by one thread at a time — made on the capture thread, then
    // opened and closed under `lock`.
    private let lock = NSLock()
    private var session: OpaquePointer?
    /// The first stream's PipeWire node.
    public let nodeID: UInt32
    /// The ScreenCast interface version of the portal.
    public let portalVersion: UInt32
    /// The pointer comes as cursor metadata (the backend cannot embed it), for ``PipeWireFrameSource`` to draw.
    public let cursorAsMetadata: Bool

    /// Asks the portal (blocking, up to the request's timeout, or until `shouldStop` returns true: it is
    /// polled every 100 ms). Call it off the main thread.
    public init(
        _ request: ScreenCastPortalRequest, logger: Logger, shouldStop: @escaping @Sendable () -> Bool = { false }
    ) throws(ScreenCastPortalError) {
        let savedToken = request.tokenFile.flatMap { Self.readToken(at: $0) }
        if savedToken != nil, let file = request.tokenFile {
            logger.info("asking the ScreenCast portal with the grant saved in \(file)")
        } else {
            logger.info("asking the ScreenCast portal for a \(request.sources.rawValue) to share (the desktop shows a dialog once; the grant is then remembered)")
        }
        var started: OpaquePointer?
        do {
            started = try Self.start(request, token: savedToken, shouldStop: shouldStop)
        } catch where savedToken != nil && error.kind == .failed {
            logger.warning("the ScreenCast portal refused the saved grant (\(error.message)); asking for a new one")
            if let file = request.tokenFile { try? FileManager.default.removeItem(atPath: file) }
            started = try Self.start(request, token: nil, shouldStop: shouldStop)
        }
        guard let started else { throw ScreenCastPortalError(.failed, "the ScreenCast portal gave no session") }
        session = started
        portalVersion = CPortalShims_version(started)
        cursorAsMetadata = CPortalShims_cursorMode(started) == 4
        if request.cursor == .embedded && cursorAsMetadata {
            logger.info("the portal cannot draw the pointer into the frames; screenpub draws it from PipeWire cursor metadata")
        }
        nodeID = CPortalShims_streamNode(started, 0)
        // Only a monitor where a window was asked for is refused: it shows more than the user chose. (The other
        // way round is harmless, and xdg-desktop-portal-wlr 0.7 calls its monitors windows: source_type 2.)
        if request.sources == .window && CPortalShims_streamSourceType(started, 0) == 1 {
            CPortalShims_close(started)
            session = nil
            throw ScreenCastPortalError(
                .sourceUnavailable, "the ScreenCast portal granted a whole monitor where a window was asked for; nothing of it is shared")
        }
        if let file = request.tokenFile {
            if let token = CPortalShims_restoreToken(started) {
                defer { free(token) }
                do {
                    try Self.saveToken(String(cString: token), at: file)
                    logger.info("the screen-cast grant is remembered in \(file): later starts do not ask again")
                } catch {
                    logger.warning("cannot save the screen-cast grant in \(file): \(error); the next start asks again")
                }
            } else if portalVersion < 4 {
                logger.notice("this ScreenCast portal (version \(portalVersion)) cannot remember grants: every start asks")
            }
        }
    }

    deinit { close() }

    /// A new connection to the PipeWire daemon serving ``nodeID`` (the caller owns the descriptor).
    public func openPipeWireRemote() throws(ScreenCastPortalError) -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        guard let session else { throw ScreenCastPortalError(.failed, "the screen cast was closed") }
        var message: UnsafeMutablePointer<CChar>?
        let descriptor = CPortalShims_openPipeWireRemote(session, &message)
        guard descriptor >= 0 else {
            defer { free(message) }
            throw ScreenCastPortalError(.failed, message.map { String(cString: $0) } ?? "OpenPipeWireRemote failed")
        }
        return descriptor
    }

    /// Ends the screen cast (the compositor stops its indicator). Idempotent.
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        CPortalShims_close(session)
        session = nil
    }

    /// Carries `shouldStop` through the C callback's context pointer.
    private final class StopQuery {
        let shouldStop: @Sendable () -> Bool
        init(_ shouldStop: @escaping @Sendable () -> Bool) { self.shouldStop = shouldStop }
    }

    private static func start(
        _ request: ScreenCastPortalRequest, token: String?, shouldStop: @escaping @Sendable () -> Bool
    ) throws(ScreenCastPortalError) -> OpaquePointer {
        var failure: Int32 = 0
        var message: UnsafeMutablePointer<CChar>?
        let sourceTypes: UInt32 = switch request.sources {
        case .monitor: 1
        case .window: 2
        case .any: 3
        }
        let cursorMode: UInt32 = request.cursor == .embedded ? 2 : 1
        let query = StopQuery(shouldStop)
        let session = withExtendedLifetime(query) {
            (token ?? "").withCString { tokenPointer in
                var shimRequest = CPortalShims_Request(
                    sourceTypes: sourceTypes, cursorMode: cursorMode, restoreToken: token == nil ? nil : tokenPointer,
                    timeoutSeconds: request.timeout,
                    // The context is `query`, given below and alive until the call returns: never nil.
                    shouldStop: { context in Unmanaged<StopQuery>.fromOpaque(context!).takeUnretainedValue().shouldStop() },
                    shouldStopContext: Unmanaged.passUnretained(query).toOpaque())
                return CPortalShims_start(&shimRequest, &failure, &message)
            }
        }
        if let session { return session }
        let detail = message.map { String(cString: $0) } ?? "unknown error"
        free(message)
        switch CPortalShims_Failure(UInt32(failure)) {
        case CPortalShims_NoSessionBus:
            throw ScreenCastPortalError(.noSessionBus, "cannot reach the ScreenCast portal: \(detail)")
        case CPortalShims_NoPortal:
            throw ScreenCastPortalError(
                .noPortal, "no desktop portal answers on the session bus (\(detail)); install and run xdg-desktop-portal with your desktop's backend")
        case CPortalShims_NoScreenCast:
            throw ScreenCastPortalError(
                .noScreenCast,
                "the desktop portal offers no ScreenCast (\(detail)); install your desktop's portal backend (xdg-desktop-portal-gnome, -kde or -wlr)")
        case CPortalShims_SourceUnavailable:
            throw ScreenCastPortalError(
                .sourceUnavailable,
                "\(detail): it cannot share \(request.sources == .window ? "one window" : "what was asked for"); share a monitor (--portal-source monitor) and hide the rest with --mask-region")
        case CPortalShims_Cancelled:
            throw ScreenCastPortalError(.cancelled, "screen sharing was declined in the desktop's dialog")
        case CPortalShims_Stopped:
            throw ScreenCastPortalError(.stopped, "stopped while asking the ScreenCast portal")
        case CPortalShims_TimedOut:
            throw ScreenCastPortalError(.timedOut, "the ScreenCast portal did not answer within \(request.timeout) s: \(detail)")
        default:
            throw ScreenCastPortalError(.failed, "the ScreenCast portal failed: \(detail)")
        }
    }

    private static func readToken(at path: String) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return token.isEmpty ? nil : token
    }

    /// Writes the token to a new file (0600 from the start) and renames it over the old one.
    private static func saveToken(_ token: String, at path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = path + ".new"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let bytes = Array((token + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor)
        Glibc.close(descriptor)
        guard written == bytes.count, synced == 0, rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
    }
}
