import CPipeWire
import CPipeWireShims
import CYUV
import Foundation
import Logging
import ScreenMedia

/// The libpipewire objects of one input stream and what its callbacks learned, for the one thread that
/// iterates its loop.
final class PipeWireStream: PipeWireStreamHandler {
    let logger: Logger
    let nodeID: UInt32
    let drawsCursor: Bool
    let connection: PipeWireConnection
    /// The capture stream, once made.
    private var input: PipeWireInputStream?
    var stream: OpaquePointer? { input?.stream }
    /// The registry's view of our node: whether it exists and when it goes.
    var nodeWatch: OpaquePointer?
    var failure: PipeWireCaptureError?
    private(set) var stateDescription = "connecting"
    var wasStreaming = false

    /// The negotiated pixel format and size; the frame the pixels are copied into.
    var format = SPA_VIDEO_FORMAT_UNKNOWN
    private(set) var frame: VideoFrame?
    /// A buffer has been copied into `frame` since the start (or the last format change).
    var hasPicture = false
    /// The newest buffer with a picture, kept from PipeWire until the next tick copies it: a compositor
    /// sending 60 buffers a second costs one copy per tick, not sixty. Older ones go back at once.
    var heldPicture: UnsafeMutablePointer<pw_buffer>?
    /// Since the last copy: the whole picture changed (a new size, or a buffer without damage metadata).
    var wholePictureChanged = true
    /// Since the last copy: a buffer came without usable damage metadata (mutter sends none), so what changed
    /// is found by comparing the held picture with the frame in tiles (``TileDiff``).
    var comparesTiles = false
    /// Since the last copy: the pointer moved, appeared, vanished or changed shape.
    var cursorChanged = false
    /// The frame changed since the consumer last had it.
    var pictureChanged = false
    var sizeChanged = false
    /// What the damage metadata of the buffers since the last copy says changed.
    var damageRegion = DamageRegion(limit: 64)
    /// Room for the damage rectangles of one buffer (x, y, width, height each).
    var damage = [Int32](repeating: 0, count: 4 * PipeWireStream.damageCapacity)
    static let damageCapacity = 32
    let clock = MonotonicClock()
    /// Scratch memory for SPA pods (params are copied by libpipewire).
    var podBuffer = [UInt8](repeating: 0, count: 2048)
    /// The pointer from cursor metadata: its shape, where it is, and where it was drawn.
    var cursor = CursorOverlay()
    var cursorPosition: (x: Int32, y: Int32)?
    /// The largest pointer bitmap accepted: the metadata size asked for is a range up to this square (mutter
    /// offers a fixed 384×384, 589,872 bytes; a range that misses the producer's size loses the pointer).
    static let largestCursorSide: UInt32 = 512
    var reportedCursorFormat = false
    /// Whether the first picture's buffer was checked for cursor metadata.
    var checkedCursorMetadata = false
    let expectsCursorMetadata: Bool
    let mask: PrivacyMask

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
        // The stream goes before the connection it was made on.
        input = nil
    }

    func connect(nodeID: UInt32) throws(PipeWireCaptureError) {
        let properties = pw_properties_new_string("media.type=Video media.category=Capture media.role=Screen")
        let input = try PipeWireInputStream(on: connection, name: "screenpub", properties: properties, handler: self)
        self.input = input
        let status = podBuffer.withUnsafeMutableBufferPointer { buffer in
            input.connect(to: nodeID, params: [CPipeWireShims_consumerFormats(buffer.baseAddress, UInt32(buffer.count))])
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
    var nodeWentAway: PipeWireCaptureError {
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

    /// The stream is freeing its buffers (renegotiation, unlink): a held one must not be queued back.
    func bufferRemoved(_ buffer: UnsafeMutablePointer<pw_buffer>) {
        if heldPicture == buffer { heldPicture = nil }
    }

    func stateChanged(_ state: pw_stream_state, error: String?) {
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

    func paramChanged(_ id: UInt32, _ param: UnsafePointer<spa_pod>?) {
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
            guard let base = buffer.baseAddress else { return }
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

    static func name(of format: spa_video_format) -> String {
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
    func process() {
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

    func releaseHeldPicture() {
        if let heldPicture, let stream { pw_stream_queue_buffer(stream, heldPicture) }
        heldPicture = nil
    }
}
