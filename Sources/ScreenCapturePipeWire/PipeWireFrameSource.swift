import CPipeWire
import CPipeWireShims
import CYUV
import Foundation
public import Logging
public import ScreenMedia

/// Why PipeWire capture could not start or had to stop.
public typealias PipeWireCaptureError = ScreenError<PipeWireCaptureFailure>

public enum PipeWireCaptureFailure: Sendable, Hashable {
    /// No PipeWire daemon answers (no socket, or the given file descriptor is not a PipeWire connection).
    case noDaemon
    /// The stream failed: no such node, the node went away, or PipeWire reported an error.
    case streamFailed
    /// The node offers no format we can read (we take BGRx, BGRA, RGBx and RGBA in memory; not DMA-BUF).
    case unsupportedFormat
    /// Connected, but no frame came within the timeout.
    case noFrames
    /// Window masks were asked for: a PipeWire stream names no windows, so they could not be applied.
    case windowMasksUnsupported
}

extension PipeWireCaptureFailure: CaptureFailureKind {
    /// A daemon or node that is gone may come back (a restarted PipeWire, a new screen cast); a mask that cannot
    /// be applied never will.
    public var isTransient: Bool { self != .windowMasksUnsupported }
}

/// Where the PipeWire daemon is.
public enum PipeWireRemote: Sendable, Hashable {
    /// `$PIPEWIRE_REMOTE`, else `pipewire-0` in `$PIPEWIRE_RUNTIME_DIR` / `$XDG_RUNTIME_DIR`.
    case `default`
    /// A connected socket, e.g. from the ScreenCast portal's `OpenPipeWireRemote` (the source takes it over).
    case fileDescriptor(Int32)
}

public struct PipeWireCaptureOptions: Sendable, Hashable {
    public var remote: PipeWireRemote
    /// The node to capture (a portal stream's node id, or one from `pw-cli ls Node`).
    public var nodeID: UInt32
    /// Seconds to wait for the first frame before giving up with ``PipeWireCaptureFailure/noFrames``.
    public var firstFrameTimeout: Double
    /// Draw the pointer when the node sends it as cursor metadata (portal cursor mode "metadata"); a
    /// pointer the compositor embeds is in the pixels anyway.
    public var drawsCursor: Bool
    /// The node is to send the pointer as cursor metadata (the portal said so): its absence is warned about.
    public var expectsCursorMetadata: Bool
    /// Its regions are covered in every frame (a screen cast names no windows: window patterns do not apply).
    public var mask: PrivacyMask

    public init(
        remote: PipeWireRemote = .default, nodeID: UInt32, firstFrameTimeout: Double = 5, drawsCursor: Bool = true,
        expectsCursorMetadata: Bool = false, mask: PrivacyMask = PrivacyMask()
    ) {
        self.remote = remote
        self.nodeID = nodeID
        self.firstFrameTimeout = firstFrameTimeout
        self.drawsCursor = drawsCursor
        self.expectsCursorMetadata = expectsCursorMetadata
        self.mask = mask
    }
}

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
        let started = clock.nanoseconds(fromTicks: clock.now())
        let timeout = UInt64(options.firstFrameTimeout * 1e9)
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
                    if stream.pictureChanged {
                        try consumer.consume(frame, sizeChanged: stream.takeSizeChange())
                        stream.pictureConsumed()
                    } else {
                        try consumer.consumeUnchanged(frame, at: clock.mediaTime(fromTicks: clock.now()))
                    }
                } else if now - started > timeout {
                    throw PipeWireCaptureError(
                        .noFrames,
                        "PipeWire node \(options.nodeID) sent no frame within \(options.firstFrameTimeout) s (state: \(stream.stateDescription))")
                }
                schedule.advance(reportingMissedTicksTo: consumer)
            }
        }
    }
}

@available(*, unavailable, message: "belongs to the capture thread")
extension PipeWireFrameSource: Sendable {}

/// The libpipewire objects of one input stream and what its callbacks learned, for the one thread that
/// iterates its loop.
final class PipeWireStream {
    private let logger: Logger
    private let nodeID: UInt32
    private let drawsCursor: Bool
    private let connection: PipeWireConnection
    private var stream: OpaquePointer?
    /// The registry's view of our node: whether it exists and when it goes.
    private var nodeWatch: OpaquePointer?
    /// Our stream listener (heap-allocated in C: libpipewire keeps pointers to it).
    private var listener: UnsafeMutablePointer<spa_hook>?
    private var failure: PipeWireCaptureError?
    private(set) var stateDescription = "connecting"
    private var wasStreaming = false

    /// The negotiated pixel format and size; the frame the pixels are copied into.
    private var format = SPA_VIDEO_FORMAT_UNKNOWN
    private(set) var frame: VideoFrame?
    /// A buffer has been copied into `frame` since the start (or the last format change).
    private(set) var hasPicture = false
    /// The newest buffer with a picture, kept from PipeWire until the next tick copies it: a compositor
    /// sending 60 buffers a second costs one copy per tick, not sixty. Older ones go back at once.
    private var heldPicture: UnsafeMutablePointer<pw_buffer>?
    /// Since the last copy: the whole picture changed (a new size, or a buffer without damage metadata).
    private var wholePictureChanged = true
    /// Since the last copy: a buffer came without usable damage metadata (mutter sends none), so what changed
    /// is found by comparing the held picture with the frame in tiles (``TileDiff``).
    private var comparesTiles = false
    /// Since the last copy: the pointer moved, appeared, vanished or changed shape.
    private var cursorChanged = false
    /// The frame changed since the consumer last had it.
    private(set) var pictureChanged = false
    private var sizeChanged = false
    /// What the damage metadata of the buffers since the last copy says changed.
    private var damageRegion = DamageRegion(limit: 64)
    /// Room for the damage rectangles of one buffer (x, y, width, height each).
    private var damage = [Int32](repeating: 0, count: 4 * PipeWireStream.damageCapacity)
    private static let damageCapacity = 32
    private let clock = MonotonicClock()
    /// Scratch memory for SPA pods (params are copied by libpipewire).
    private var podBuffer = [UInt8](repeating: 0, count: 2048)
    /// The pointer from cursor metadata: its shape, where it is, and where it was drawn.
    private var cursor = CursorOverlay()
    private var cursorPosition: (x: Int32, y: Int32)?
    /// The largest pointer bitmap accepted: the metadata size asked for is a range up to this square (mutter
    /// offers a fixed 384×384, 589,872 bytes; a range that misses the producer's size loses the pointer).
    static let largestCursorSide: UInt32 = 512
    private var reportedCursorFormat = false
    /// Whether the first picture's buffer was checked for cursor metadata.
    private var checkedCursorMetadata = false
    private let expectsCursorMetadata: Bool
    private let mask: PrivacyMask

    init(options: PipeWireCaptureOptions, logger: Logger) throws(PipeWireCaptureError) {
        // The share refuses window masks for PipeWire before capturing; this keeps any other caller from
        // believing a window is hidden when nothing could hide it.
        guard options.mask.windowPatterns.isEmpty else {
            throw PipeWireCaptureError(
                .windowMasksUnsupported, "window masks cannot be applied to a PipeWire stream (it names no windows): hide areas with --mask-region")
        }
        self.logger = logger
        mask = options.mask
        self.nodeID = options.nodeID
        self.drawsCursor = options.drawsCursor
        expectsCursorMetadata = options.expectsCursorMetadata
        connection = try PipeWireConnection(remote: options.remote, capturing: "PipeWire node \(options.nodeID)")
        nodeWatch = CPipeWireShims_watchNode(connection.core, options.nodeID)
        try connect(nodeID: options.nodeID)
    }

    deinit {
        CPipeWireShims_unwatchNode(nodeWatch)
        releaseHeldPicture()
        if let stream {
            CPipeWireShims_removeStreamListener(listener)
            pw_stream_destroy(stream)
        }
    }

    private func connect(nodeID: UInt32) throws(PipeWireCaptureError) {
        let properties = pw_properties_new_string("media.type=Video media.category=Capture media.role=Screen")
        guard let stream = pw_stream_new(connection.core, "screenpub", properties) else {
            throw PipeWireCaptureError(.streamFailed, "cannot create a PipeWire stream")
        }
        self.stream = stream
        var events = pw_stream_events()
        events.version = UInt32(PW_VERSION_STREAM_EVENTS)
        events.state_changed = { data, _, state, error in
            Unmanaged<PipeWireStream>.fromOpaque(data!).takeUnretainedValue()
                .stateChanged(state, error: error.map { String(cString: $0) })
        }
        events.param_changed = { data, id, param in
            Unmanaged<PipeWireStream>.fromOpaque(data!).takeUnretainedValue().paramChanged(id, param)
        }
        events.process = { data in
            Unmanaged<PipeWireStream>.fromOpaque(data!).takeUnretainedValue().process()
        }
        events.remove_buffer = { data, buffer in
            // The stream is freeing its buffers (renegotiation, unlink): a held one must not be queued back.
            let stream = Unmanaged<PipeWireStream>.fromOpaque(data!).takeUnretainedValue()
            if stream.heldPicture == buffer { stream.heldPicture = nil }
        }
        listener = CPipeWireShims_addStreamListener(stream, &events, Unmanaged.passUnretained(self).toOpaque())
        let status = podBuffer.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var params: [UnsafePointer<spa_pod>?] = [CPipeWireShims_consumerFormats(buffer.baseAddress, UInt32(buffer.count))]
            let flags = pw_stream_flags(PW_STREAM_FLAG_AUTOCONNECT.rawValue | PW_STREAM_FLAG_MAP_BUFFERS.rawValue | PW_STREAM_FLAG_DONT_RECONNECT.rawValue)
            return pw_stream_connect(stream, SPA_DIRECTION_INPUT, nodeID, flags, &params, UInt32(params.count))
        }
        guard status >= 0 else {
            throw PipeWireCaptureError(.streamFailed, "cannot connect to PipeWire node \(nodeID): \(String(cString: strerror(-status)))")
        }
    }

    /// Runs `body` with the loop entered by this thread (PipeWire's callbacks happen inside `iterate`).
    func whileEntered(_ body: () throws -> Void) throws {
        try connection.whileEntered(body)
    }

    /// The node vanished from the registry, or its stream disconnected after streaming: the same event.
    private var nodeWentAway: PipeWireCaptureError {
        PipeWireCaptureError(.streamFailed, "PipeWire node \(nodeID) went away (its screen cast ended, or the compositor exited)")
    }

    /// Dispatches what PipeWire has for us, waiting up to `timeoutMilliseconds`; throws the stream's failure.
    func iterate(timeoutMilliseconds: Int32) throws(PipeWireCaptureError) {
        try connection.iterate(timeoutMilliseconds: timeoutMilliseconds)
        if failure == nil, let nodeWatch {
            switch CPipeWireShims_nodeState(nodeWatch) {
            case CPipeWireShims_NodeAbsent:
                failure = PipeWireCaptureError(.streamFailed, "PipeWire has no node \(nodeID) (`pw-cli ls Node` lists them)")
            case CPipeWireShims_NodeRemoved:
                failure = nodeWentAway
            default:
                let error = CPipeWireShims_coreError(nodeWatch)
                if error < 0 {
                    failure = PipeWireCaptureError(.streamFailed, "the PipeWire connection failed: \(String(cString: strerror(-error)))")
                }
            }
        }
        if let failure { throw failure }
    }

    func takeSizeChange() -> Bool {
        defer { sizeChanged = false }
        return sizeChanged
    }

    /// The consumer has the current picture: what changes next is tracked from here.
    func pictureConsumed() {
        pictureChanged = false
        frame?.changedRects.removeAll(keepingCapacity: true)
    }

    // MARK: Callbacks (on this thread, inside iterate)

    private func stateChanged(_ state: pw_stream_state, error: String?) {
        stateDescription = String(cString: pw_stream_state_as_string(state))
        switch state {
        case PW_STREAM_STATE_ERROR:
            failure = PipeWireCaptureError(.streamFailed, "PipeWire node \(nodeID): \(error ?? "stream error")")
        case PW_STREAM_STATE_UNCONNECTED:
            let connectionLost = nodeWatch.map { CPipeWireShims_coreError($0) < 0 } ?? false
            failure = PipeWireCaptureError(
                .streamFailed,
                connectionLost
                    ? "lost the connection to PipeWire while capturing node \(nodeID) (did the pipewire daemon stop?)"
                    : wasStreaming ? nodeWentAway.message : "PipeWire disconnected before node \(nodeID) streamed")
        case PW_STREAM_STATE_STREAMING:
            wasStreaming = true
            logger.debug("PipeWire node \(nodeID) is streaming")
        default:
            break
        }
    }

    private func paramChanged(_ id: UInt32, _ param: UnsafePointer<spa_pod>?) {
        guard id == SPA_PARAM_Format.rawValue, let param, let stream else { return }
        var format: UInt32 = 0, width: UInt32 = 0, height: UInt32 = 0
        guard CPipeWireShims_parseVideoFormat(param, &format, &width, &height) == 0, width > 0, height > 0 else {
            failure = PipeWireCaptureError(.unsupportedFormat, "PipeWire node \(nodeID) offers no raw video format we read")
            return
        }
        let videoFormat = spa_video_format(format)
        guard [SPA_VIDEO_FORMAT_BGRx, SPA_VIDEO_FORMAT_BGRA, SPA_VIDEO_FORMAT_RGBx, SPA_VIDEO_FORMAT_RGBA].contains(videoFormat) else {
            failure = PipeWireCaptureError(.unsupportedFormat, "PipeWire node \(nodeID) negotiated format \(format), which is not 32-bit RGB")
            return
        }
        self.format = videoFormat
        if let frame {
            if frame.resize(width: Int(width), height: Int(height)) { sizeChanged = true }
        } else {
            frame = VideoFrame(width: Int(width), height: Int(height))
            sizeChanged = true
        }
        if let frame, !mask.regions.isEmpty {
            frame.covers.style = mask.style
            _ = frame.covers.set(mask.regions, within: frame.bounds)
        }
        logger.info("PipeWire node \(nodeID): \(width)×\(height) \(Self.name(of: videoFormat))")
        // A new size invalidates the picture: the next buffer is copied whole.
        hasPicture = false
        releaseHeldPicture()
        wholePictureChanged = true
        frame?.changedRects.removeAll(keepingCapacity: true)
        damageRegion.removeAll()
        cursor.forgetDrawn()
        podBuffer.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            let quarter = UInt32(buffer.count / 4)
            var params: [UnsafePointer<spa_pod>?] = [
                CPipeWireShims_buffers(base, quarter, width * 4, height),
                CPipeWireShims_meta(base + Int(quarter), quarter, SPA_META_Header.rawValue, 0),
                CPipeWireShims_meta(base + Int(2 * quarter), quarter, SPA_META_VideoDamage.rawValue, UInt32(Self.damageCapacity)),
                CPipeWireShims_cursorMeta(base + Int(3 * quarter), quarter, Self.largestCursorSide),
            ]
            _ = pw_stream_update_params(stream, &params, UInt32(params.count))
        }
    }

    private static func name(of format: spa_video_format) -> String {
        switch format {
        case SPA_VIDEO_FORMAT_BGRx: "BGRx"
        case SPA_VIDEO_FORMAT_BGRA: "BGRA"
        case SPA_VIDEO_FORMAT_RGBx: "RGBx"
        case SPA_VIDEO_FORMAT_RGBA: "RGBA"
        default: "format \(format.rawValue)"
        }
    }

    /// PipeWire has buffers for us: keep the newest picture (its damage, and that of the ones it replaces,
    /// is noted) and the pointer's metadata; the copy waits for the tick (``takeHeldPicture()``).
    private func process() {
        guard let stream, let frame else { return }
        while let buffer = pw_stream_dequeue_buffer(stream) {
            guard let spaBuffer = buffer.pointee.buffer else {
                pw_stream_queue_buffer(stream, buffer)
                continue
            }
            if drawsCursor && readCursor(spaBuffer) { cursorChanged = true }
            guard Self.carriesPicture(spaBuffer) else {
                // A cursor-only update (chunk size 0) or a corrupted buffer.
                pw_stream_queue_buffer(stream, buffer)
                continue
            }
            releaseHeldPicture()
            heldPicture = buffer
            if !wholePictureChanged && !comparesTiles && !collectDamage(spaBuffer, into: frame) { comparesTiles = true }
        }
    }

    private func releaseHeldPicture() {
        if let heldPicture, let stream { pw_stream_queue_buffer(stream, heldPicture) }
        heldPicture = nil
    }

    /// At a tick: copies the held picture's changed parts into the frame (one copy, swizzled on the way),
    /// gives the buffer back, and redraws the pointer if it moved — then ``pictureChanged`` tells the
    /// capture loop to hand the frame on.
    func takeHeldPicture() {
        guard let frame, heldPicture != nil || (cursorChanged && hasPicture) else { return }
        // Take the pointer off the picture (it moved, or the picture under it is replaced).
        if let uncovered = cursor.restorePixelsBelow(in: frame) { frame.changedRects.append(uncovered) }
        let now = clock.nanoseconds(fromTicks: clock.now())
        var stamp = now
        if let held = heldPicture {
            defer { releaseHeldPicture() }
            let spaBuffer = held.pointee.buffer!
            let data = spaBuffer.pointee.datas!
            let chunk = data.pointee.chunk!
            let stride = chunk.pointee.stride > 0 ? Int(chunk.pointee.stride) : frame.width * 4
            if stride >= frame.width * 4, stride * frame.height <= Int(data.pointee.maxsize) - Int(chunk.pointee.offset) {
                let source = data.pointee.data!.advanced(by: Int(chunk.pointee.offset))
                defer { damageRegion.removeAll() }
                if wholePictureChanged || !hasPicture || (comparesTiles && swizzles) {
                    frame.markAllChanged()
                } else if !comparesTiles {
                    frame.changedRects.append(contentsOf: damageRegion.rects)
                } else {
                    // The frame holds the last picture (the pointer already taken off): compare in tiles.
                    frame.withUnsafeBytes { previous in
                        _ = TileDiff.changedRects(
                            previous: previous.baseAddress!, previousStride: frame.bytesPerRow, current: source,
                            currentStride: stride, width: frame.width, height: frame.height, into: &frame.changedRects)
                    }
                    if frame.changedRects.isEmpty && !cursorChanged {
                        // The same picture again (a compositor repainting without damage): nothing to do.
                        comparesTiles = false
                        return
                    }
                }
                copy(from: source, stride: stride, into: frame)
                wholePictureChanged = false
                comparesTiles = false
                // The compositor's presentation time when it is on our clock (CLOCK_MONOTONIC), else now.
                var pts: Int64 = -1, headerFlags: UInt32 = 0
                if CPipeWireShims_header(spaBuffer, &pts, &headerFlags), pts > 0, UInt64(pts) <= now, now - UInt64(pts) < 1_000_000_000 {
                    stamp = UInt64(pts)
                }
                hasPicture = true
            }
        }
        guard hasPicture else { return }
        cursorChanged = false
        if let position = cursorPosition, cursor.hasShape {
            cursor.draw(into: frame, pointerX: Int(position.x), pointerY: Int(position.y), keepingPixelsBelow: true)
            if !cursor.drawnRect.isEmpty { frame.changedRects.append(cursor.drawnRect) }
        }
        frame.captureTime = clock.mediaTime(fromTicks: clock.ticks(fromNanoseconds: stamp))
        frame.wallClock = WallClockTime.now()
        pictureChanged = true
    }

    /// Whether the buffer holds a picture: mapped data, a non-empty chunk, not marked corrupted.
    private static func carriesPicture(_ buffer: UnsafeMutablePointer<spa_buffer>) -> Bool {
        var pts: Int64 = -1, headerFlags: UInt32 = 0
        _ = CPipeWireShims_header(buffer, &pts, &headerFlags)
        guard buffer.pointee.n_datas > 0, let data = buffer.pointee.datas, data.pointee.data != nil,
            let chunk = data.pointee.chunk, chunk.pointee.size > 0
        else { return false }
        return headerFlags & UInt32(SPA_META_HEADER_FLAG_CORRUPTED) == 0 && chunk.pointee.flags & Int32(SPA_CHUNK_FLAG_CORRUPTED) == 0
    }

    /// Takes the buffer's cursor metadata; true when the pointer moved, appeared, vanished or changed shape.
    private func readCursor(_ buffer: UnsafeMutablePointer<spa_buffer>) -> Bool {
        var meta = CPipeWireShims_Cursor()
        let kind = CPipeWireShims_cursor(buffer, &meta)
        if !checkedCursorMetadata {
            checkedCursorMetadata = true
            if kind == -1 && expectsCursorMetadata {
                logger.warning(
                    "PipeWire node \(nodeID) sends no cursor metadata although the pointer was to come that way: the pointer will not be shown (the compositor's cursor metadata size may be larger than a \(Self.largestCursorSide)×\(Self.largestCursorSide) pointer)")
            }
        }
        switch kind {
        case -1:
            return false
        case 0:
            defer { cursorPosition = nil }
            return cursorPosition != nil
        default:
            var changed = cursorPosition.map { $0.x != meta.x || $0.y != meta.y } ?? true
            cursorPosition = (meta.x, meta.y)
            if kind == 2, let pixels = meta.pixels { changed = loadCursorShape(meta, pixels) || changed }
            return changed
        }
    }

    /// Converts a cursor bitmap (straight alpha, RGBA or BGRA) to the overlay's premultiplied BGRA.
    private func loadCursorShape(_ meta: CPipeWireShims_Cursor, _ pixels: UnsafePointer<UInt8>) -> Bool {
        let format = spa_video_format(meta.format)
        let redFirst: Bool
        switch format {
        case SPA_VIDEO_FORMAT_RGBA: redFirst = true
        case SPA_VIDEO_FORMAT_BGRA: redFirst = false
        default:
            if !reportedCursorFormat {
                reportedCursorFormat = true
                logger.warning("PipeWire node \(nodeID): cursor bitmaps in format \(meta.format) are not drawn")
            }
            return false
        }
        let width = Int(meta.width), height = Int(meta.height), stride = Int(meta.stride)
        guard width <= Int(Self.largestCursorSide), height <= Int(Self.largestCursorSide) else { return false }
        cursor.setShape(width: width, height: height, hotX: Int(meta.hotX), hotY: Int(meta.hotY)) { shape in
            for row in 0..<height {
                let line = pixels + row * stride
                for column in 0..<width {
                    let pixel = line + column * 4
                    let alpha = UInt32(pixel[3])
                    let red = UInt32(redFirst ? pixel[0] : pixel[2]), blue = UInt32(redFirst ? pixel[2] : pixel[0])
                    let green = UInt32(pixel[1])
                    // Swift's << binds tighter than * and /: each channel is premultiplied first, then placed.
                    let premultipliedRed = (red * alpha + 127) / 255, premultipliedGreen = (green * alpha + 127) / 255
                    let premultipliedBlue = (blue * alpha + 127) / 255
                    shape.append(alpha << 24 | premultipliedRed << 16 | premultipliedGreen << 8 | premultipliedBlue)
                }
            }
        }
        return true
    }

    /// Adds a buffer's damage rectangles to ``damageRegion``; false when the buffer has no damage metadata or
    /// they are too many (then the picture is compared in tiles).
    private func collectDamage(_ buffer: UnsafeMutablePointer<spa_buffer>?, into frame: VideoFrame) -> Bool {
        guard let buffer else { return false }
        let count = damage.withUnsafeMutableBufferPointer {
            CPipeWireShims_damage(buffer, $0.baseAddress, Int32(Self.damageCapacity))
        }
        guard count >= 0, count <= Int32(Self.damageCapacity) else { return false }
        for index in 0..<Int(count) {
            let rect = PixelRect(
                x: Int(damage[index * 4]), y: Int(damage[index * 4 + 1]), width: Int(damage[index * 4 + 2]),
                height: Int(damage[index * 4 + 3]))
            damageRegion.add(rect, within: frame.bounds)
        }
        // Past the region's limit, comparing tiles finds less to code than the rectangles' bounding box.
        return !damageRegion.overflowed
    }

    /// Whether the stream's pixels are in RGB order, to be swizzled into our BGRA (and so not comparable with
    /// the frame byte for byte).
    private var swizzles: Bool { format == SPA_VIDEO_FORMAT_RGBx || format == SPA_VIDEO_FORMAT_RGBA }

    /// Copies the changed rectangles from the buffer into the frame, as BGRA.
    private func copy(from source: UnsafeMutableRawPointer, stride: Int, into frame: VideoFrame) {
        frame.withUnsafeMutableBytes { destination in
            guard let base = destination.baseAddress else { return }
            for rect in frame.changedRects {
                let from = source.advanced(by: rect.y * stride + rect.x * 4).assumingMemoryBound(to: UInt8.self)
                let to = base.advanced(by: rect.y * frame.bytesPerRow + rect.x * 4).assumingMemoryBound(to: UInt8.self)
                if swizzles {
                    // libyuv's "ABGR" is R,G,B,A in memory; its "ARGB" is B,G,R,A: our BGRA.
                    _ = ABGRToARGB(from, Int32(stride), to, Int32(frame.bytesPerRow), Int32(rect.width), Int32(rect.height))
                } else {
                    _ = ARGBCopy(from, Int32(stride), to, Int32(frame.bytesPerRow), Int32(rect.width), Int32(rect.height))
                }
            }
        }
    }
}
