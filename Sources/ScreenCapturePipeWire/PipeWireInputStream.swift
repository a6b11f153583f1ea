import CPipeWire
import CPipeWireShims
import Foundation

/// What a capture stream tells its owner, on the thread that iterates its connection's loop.
protocol PipeWireStreamHandler: AnyObject {
    func stateChanged(_ state: pw_stream_state, error: String?)
    func paramChanged(_ id: UInt32, _ param: UnsafePointer<spa_pod>?)
    /// Buffers are ready to dequeue.
    func process()
    /// PipeWire frees `buffer` (renegotiation, unlink): one held must not be queued back.
    func bufferRemoved(_ buffer: UnsafeMutablePointer<pw_buffer>)
}

extension PipeWireStreamHandler {
    func bufferRemoved(_ buffer: UnsafeMutablePointer<pw_buffer>) {}
}

/// One capture stream (`pw_stream`) on a connection, its events to its handler; destroyed, its listener first, on
/// deinit. The video and the audio capture make theirs here.
final class PipeWireInputStream {
    let stream: OpaquePointer
    private var listener: UnsafeMutablePointer<spa_hook>?
    /// Its owner, which keeps it: it never outlives the handler, and sends nothing once the listener is gone.
    private unowned let handler: any PipeWireStreamHandler

    /// `properties` (a `pw_properties`, taken over by the stream) say what it captures.
    init(on connection: PipeWireConnection, name: String, properties: UnsafeMutablePointer<pw_properties>?, handler: any PipeWireStreamHandler) throws(PipeWireCaptureError) {
        guard let stream = pw_stream_new(connection.core, name, properties) else {
            throw PipeWireCaptureError(.streamFailed, "cannot create a PipeWire stream")
        }
        self.stream = stream
        self.handler = handler
        var events = pw_stream_events()
        events.version = UInt32(PW_VERSION_STREAM_EVENTS)
        // `data` is this stream, as added with the listener below.
        events.state_changed = { data, _, state, error in
            guard let data else { return }
            PipeWireInputStream.handler(of: data).stateChanged(state, error: error.map { String(cString: $0) })
        }
        events.param_changed = { data, id, param in
            guard let data else { return }
            PipeWireInputStream.handler(of: data).paramChanged(id, param)
        }
        events.process = { data in
            guard let data else { return }
            PipeWireInputStream.handler(of: data).process()
        }
        events.remove_buffer = { data, buffer in
            guard let data, let buffer else { return }
            PipeWireInputStream.handler(of: data).bufferRemoved(buffer)
        }
        listener = CPipeWireShims_addStreamListener(stream, &events, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        CPipeWireShims_removeStreamListener(listener)
        pw_stream_destroy(stream)
    }

    /// Connects it for capture, its buffers mapped, to `target` (`UInt32.max`, PW_ID_ANY: the target its
    /// properties name) offering `params`; PipeWire's error (a negative errno) on failure.
    func connect(to target: UInt32, params: [UnsafePointer<spa_pod>?]) -> Int32 {
        var params = params
        let flags = pw_stream_flags(PW_STREAM_FLAG_AUTOCONNECT.rawValue | PW_STREAM_FLAG_MAP_BUFFERS.rawValue | PW_STREAM_FLAG_DONT_RECONNECT.rawValue)
        return pw_stream_connect(stream, SPA_DIRECTION_INPUT, target, flags, &params, UInt32(params.count))
    }

    private static func handler(of data: UnsafeMutableRawPointer) -> any PipeWireStreamHandler {
        Unmanaged<PipeWireInputStream>.fromOpaque(data).takeUnretainedValue().handler
    }
}

@available(*, unavailable, message: "belongs to the thread that iterates its connection's loop")
extension PipeWireInputStream: Sendable {}
