import CPipeWire
import CPipeWireShims
import Foundation
import ScreenMedia

/// A PipeWire video node for tests, standing in for a compositor's screen cast: a native `pw_stream`
/// (output, driving its own clock) that fills every buffer with one known colour and writes a frame counter
/// into the first pixel's bytes and the buffer header. It runs on a `pw_thread_loop` of its own.
public final class PipeWireTestProducer: @unchecked Sendable {
    // @unchecked: every libpipewire object here is touched only with the thread loop's lock held (or on the
    // loop's thread, in callbacks), which is how libpipewire's thread loop is meant to be used.
    public enum PixelOrder: Sendable {
        case bgrx
        case rgbx

        var spaFormat: spa_video_format { self == .bgrx ? SPA_VIDEO_FORMAT_BGRx : SPA_VIDEO_FORMAT_RGBx }
    }

    private let connection: PipeWireTestConnection
    private let closed = Locked(false)
    private var stream: OpaquePointer?
    /// Our stream listener (heap-allocated in C: libpipewire keeps pointers to it).
    private var listener: UnsafeMutablePointer<spa_hook>?
    private var timer: UnsafeMutablePointer<spa_source>?
    private var podBuffer = [UInt8](repeating: 0, count: 2048)
    private let order: PixelOrder
    private let framesPerSecond: UInt32
    private var width: UInt32
    private var height: UInt32
    /// The colour as (r, g, b).
    private let color: (UInt8, UInt8, UInt8)
    private var counter: UInt32 = 0
    private var negotiatedWidth: UInt32 = 0
    /// The pointer sent as cursor metadata: where, and whether its bitmap still has to be sent.
    private var cursor: (x: Int32, y: Int32)?
    /// Buffers that still get the bitmap: a few, because the first buffers after linking may be
    /// reallocated before the consumer sees them (a compositor re-sends it on renegotiation too).
    private var cursorBitmapsPending = 0
    /// After ``freezePicture()``: buffers carry no picture (chunk size 0), as a compositor's cursor-only updates.
    private var pictureFrozen = false
    /// The cursor bitmap: a square of this side in this colour (r, g, b).
    public static let cursorSide: UInt32 = 16
    private let cursorMetadataSide: UInt32?
    public static let cursorColor: (r: UInt8, g: UInt8, b: UInt8) = (250, 240, 20)


    /// Connects to `pipewire` and starts producing at `framesPerSecond` once a consumer links to it. The
    /// PipeWire closes it before its daemons stop (a client outliving its daemon can crash libpipewire).
    /// `cursorMetadataSide`: offer cursor metadata of exactly this size (room for a side×side bitmap), as mutter
    /// does (384); nil offers a range up to 64×64.
    public init(
        on pipewire: PrivatePipeWire, width: Int, height: Int, order: PixelOrder = .bgrx, color: (r: UInt8, g: UInt8, b: UInt8),
        framesPerSecond: Int = 30, cursorMetadataSide: UInt32? = nil
    ) throws {
        self.cursorMetadataSide = cursorMetadataSide
        self.order = order
        self.width = UInt32(width)
        self.height = UInt32(height)
        self.color = (color.r, color.g, color.b)
        self.framesPerSecond = UInt32(framesPerSecond)
        connection = try PipeWireTestConnection(to: pipewire, name: "test-producer", who: "the producer")
        let core = connection.core
        pw_thread_loop_lock(connection.threadLoop)
        defer { pw_thread_loop_unlock(connection.threadLoop) }
        let properties = pw_properties_new_string("media.class=Video/Source node.name=screenpub-test-producer")
        guard let stream = pw_stream_new(core, "screenpub-test-producer", properties) else {
            throw PrivatePipeWire.Failure(description: "pw_stream_new failed")
        }
        self.stream = stream
        var events = pw_stream_events()
        events.version = UInt32(PW_VERSION_STREAM_EVENTS)
        // `data` is the listener's or timer's context, `self` (given below): never nil.
        events.param_changed = { data, id, param in
            Unmanaged<PipeWireTestProducer>.fromOpaque(data!).takeUnretainedValue().paramChanged(id, param)
        }
        events.process = { data in
            Unmanaged<PipeWireTestProducer>.fromOpaque(data!).takeUnretainedValue().produce()
        }
        listener = CPipeWireShims_addStreamListener(stream, &events, Unmanaged.passUnretained(self).toOpaque())
        let loop = pw_thread_loop_get_loop(connection.threadLoop)
        timer = CPipeWireShims_addTimer(loop, { data, _ in
            let producer = Unmanaged<PipeWireTestProducer>.fromOpaque(data!).takeUnretainedValue()
            // Only while streaming: once the daemon has gone (a test tearing down its PipeWire first),
            // triggering a stream whose node was destroyed would call into freed memory.
            if let stream = producer.stream, pw_stream_get_state(stream, nil) == PW_STREAM_STATE_STREAMING {
                pw_stream_trigger_process(stream)
            }
        }, Unmanaged.passUnretained(self).toOpaque())
        let status = offer(width: self.width, height: self.height) { params, count in
            pw_stream_connect(
                stream, SPA_DIRECTION_OUTPUT, UInt32.max,  // PW_ID_ANY
                pw_stream_flags(PW_STREAM_FLAG_DRIVER.rawValue | PW_STREAM_FLAG_MAP_BUFFERS.rawValue), params, count)
        }
        guard status >= 0 else { throw PrivatePipeWire.Failure(description: "the producer cannot connect its stream: \(status)") }
        CPipeWireShims_startTimer(loop, timer, 1_000_000_000 / UInt64(framesPerSecond))
        pipewire.closeBeforeStopping { [weak self] in self?.close() }
    }

    deinit { close() }

    /// Removes the node and disconnects, ending the loop's thread. Idempotent.
    public func close() {
        guard closed.withLock({ closed in defer { closed = true }; return !closed }) else { return }
        stop()
        connection.close()
    }

    /// The node's id once PipeWire has made it (waits up to 10 s).
    public func nodeID() async throws -> UInt32 {
        for _ in 0..<200 {
            let id = locked { stream.map { pw_stream_get_node_id($0) } ?? SPA_ID_INVALID }
            if id != SPA_ID_INVALID { return id }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw PrivatePipeWire.Failure(description: "the producer's node got no id")
    }

    /// Frames produced so far.
    public var framesProduced: UInt32 { locked { counter } }

    /// Continues at a new size (the format is negotiated again).
    public func resize(width: Int, height: Int) {
        locked {
            self.width = UInt32(width)
            self.height = UInt32(height)
            guard let stream else { return }
            _ = offer(width: self.width, height: self.height) { params, count in pw_stream_update_params(stream, params, count) }
        }
    }

    /// Sends the pointer at (x, y) as cursor metadata from the next buffer on (its bitmap with the first).
    public func setCursor(x: Int, y: Int) {
        locked {
            if cursor == nil { cursorBitmapsPending = 5 }
            cursor = (Int32(x), Int32(y))
        }
    }

    /// From now on, buffers carry only cursor metadata and no picture.
    public func freezePicture() { locked { pictureFrozen = true } }

    /// Pictures again from the next buffer on (after ``freezePicture()``).
    public func resumePicture() { locked { pictureFrozen = false } }

    /// Removes the node, as a compositor does when the screen cast ends (the connection stays until deinit).
    public func stop() {
        locked {
            if let timer { CPipeWireShims_destroySource(pw_thread_loop_get_loop(connection.threadLoop), timer) }
            timer = nil
            if let stream {
                CPipeWireShims_removeStreamListener(listener)
            listener = nil
                pw_stream_destroy(stream)
            }
            stream = nil
        }
    }

    private func locked<T>(_ body: () -> T) -> T { connection.locked(body) }

    private func offer(width: UInt32, height: UInt32, _ use: (UnsafeMutablePointer<UnsafePointer<spa_pod>?>, UInt32) -> Int32) -> Int32 {
        podBuffer.withUnsafeMutableBufferPointer { buffer in
            var params: [UnsafePointer<spa_pod>?] = [
                CPipeWireShims_fixedFormat(buffer.baseAddress, UInt32(buffer.count), order.spaFormat.rawValue, width, height, framesPerSecond)
            ]
            return use(&params, 1)
        }
    }

    // MARK: On the loop's thread

    private func paramChanged(_ id: UInt32, _ param: UnsafePointer<spa_pod>?) {
        guard id == SPA_PARAM_Format.rawValue, let param, let stream else { return }
        var format: UInt32 = 0, negotiatedWidth: UInt32 = 0, negotiatedHeight: UInt32 = 0
        guard CPipeWireShims_parseVideoFormat(param, &format, &negotiatedWidth, &negotiatedHeight) == 0 else { return }
        self.negotiatedWidth = negotiatedWidth
        podBuffer.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!  // the pod buffer is allocated at its full size once
            let third = UInt32(buffer.count / 3)
            var params: [UnsafePointer<spa_pod>?] = [
                CPipeWireShims_buffers(base, third, negotiatedWidth * 4, negotiatedHeight),
                CPipeWireShims_meta(base + Int(third), third / 2, SPA_META_Header.rawValue, 0),
                cursorMetadataSide.map { CPipeWireShims_fixedCursorMeta(base + Int(third + third / 2), third / 2, $0) }
                    ?? CPipeWireShims_cursorMeta(base + Int(third + third / 2), third / 2, 64),
            ]
            _ = pw_stream_update_params(stream, &params, UInt32(params.count))
        }
    }

    private func produce() {
        guard let stream, let buffer = pw_stream_dequeue_buffer(stream) else { return }
        defer { pw_stream_queue_buffer(stream, buffer) }
        guard let spaBuffer = buffer.pointee.buffer, spaBuffer.pointee.n_datas > 0, let data = spaBuffer.pointee.datas,
            let pixels = data.pointee.data, negotiatedWidth > 0
        else { return }
        let stride = Int(negotiatedWidth) * 4
        let rows = Int(data.pointee.maxsize) / stride
        counter &+= 1
        if let cursor {
            let (r, g, b) = Self.cursorColor
            if CPipeWireShims_setCursor(spaBuffer, 1, cursor.x, cursor.y, cursorBitmapsPending > 0 ? Self.cursorSide : 0, r, g, b) {
                cursorBitmapsPending = max(0, cursorBitmapsPending - 1)
            }
        }
        if pictureFrozen {
            data.pointee.chunk.pointee.size = 0
            return
        }
        let (r, g, b) = color
        let pixel: (UInt8, UInt8, UInt8) = order == .bgrx ? (b, g, r) : (r, g, b)
        let bytes = pixels.assumingMemoryBound(to: UInt8.self)
        for row in 0..<rows {
            let line = bytes.advanced(by: row * stride)
            for x in 0..<Int(negotiatedWidth) {
                line[x * 4] = pixel.0
                line[x * 4 + 1] = pixel.1
                line[x * 4 + 2] = pixel.2
                line[x * 4 + 3] = 255
            }
        }
        // The counter in the first pixel, little-endian over its four bytes.
        withUnsafeBytes(of: counter.littleEndian) { counterBytes in
            for index in 0..<4 { bytes[index] = counterBytes[index] }
        }
        data.pointee.chunk.pointee.offset = 0
        data.pointee.chunk.pointee.stride = Int32(stride)
        data.pointee.chunk.pointee.size = UInt32(rows * stride)
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        CPipeWireShims_setHeader(spaBuffer, Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec), UInt64(counter))
    }
}
