import CPipeWire
import CPipeWireShims
import Foundation
public import Logging
public import ScreenMedia

/// Captures sound from PipeWire (the desktop's output, a microphone, any node) as 48 kHz float samples.
///
/// Like ``PipeWireFrameSource``, it has a private PipeWire loop iterated by the one thread that calls
/// ``run(stop:consumer:)`` (the audio thread): the stream's callbacks and the consumer run there. PipeWire's
/// adapter converts whatever the node plays to 32-bit float at 48 kHz, mono or stereo as the node is (more
/// channels are downmixed to stereo).
/// Each buffer is stamped with the capture time of its first sample, on the same clock as the video frames:
/// counted back from the graph cycle's time, the device-to-stream delay and the samples queued after it.
public final class PipeWireAudioSource: PipeWireStreamHandler {
    public static let sampleRate = 48_000
    public let options: PipeWireAudioOptions
    private let logger: Logger
    private let clock = MonotonicClock()
    private let connection: PipeWireConnection
    /// The capture stream, once made.
    private var input: PipeWireInputStream?
    private var stream: OpaquePointer? { input?.stream }
    private var podBuffer = [UInt8](repeating: 0, count: 1024)
    private var failure: PipeWireCaptureError?
    private var stateDescription = "connecting"
    private var consumer: (any AudioSampleConsumer)?
    private var consumerError: (any Error)?
    /// The negotiated channel count (0 until then).
    public private(set) var channels = 0
    /// The smoothed time from a buffer's last sample being captured to its delivery here, in milliseconds.
    public private(set) var captureLatencyMilliseconds: Double?

    /// Connects to the daemon, asks for the input and waits (up to ``PipeWireAudioOptions/linkTimeout``) until
    /// PipeWire has linked it and agreed on a format, so ``channels`` is known. Call it on the thread that will
    /// call `run`. Throws ``PipeWireCaptureFailure/noDaemon`` without a PipeWire daemon.
    public init(options: PipeWireAudioOptions, logger: Logger) throws(PipeWireCaptureError) {
        self.options = options
        self.logger = logger
        connection = try PipeWireConnection(remote: options.remote, capturing: options.input.description)
        try connect()
        let deadline = clock.nanoseconds(fromTicks: clock.now()) + UInt64(options.linkTimeout * 1e9)
        try connection.whileEntered { () throws(PipeWireCaptureError) in
            while channels == 0 {
                try iterate(timeoutMilliseconds: 50)
                guard clock.nanoseconds(fromTicks: clock.now()) < deadline else {
                    throw PipeWireCaptureError(
                        .noFrames,
                        "PipeWire did not connect \(options.input) within \(options.linkTimeout) s (state: \(stateDescription)); \(hint)")
                }
            }
        }
    }

    deinit {
        // The stream goes before the connection it was made on.
        input = nil
    }

    private var hint: String {
        switch options.input {
        case .desktop: "is there an audio output (`wpctl status`)?"
        case .microphone: "is there an audio input (`wpctl status`)?"
        case .node: "`pw-cli ls Node` lists the nodes by id and node.name"
        }
    }

    private func connect() throws(PipeWireCaptureError) {
        var description = "media.type=Audio media.category=Capture media.role=Screen node.name=screenpub-audio node.latency=480/48000"
        var target: String?
        switch options.input {
        case .desktop:
            description += " stream.capture.sink=true"
        case .microphone:
            break
        case .node(let wanted):
            let node = try connection.whileEntered { () throws(PipeWireCaptureError) in try Self.find(wanted, among: connection.nodes()) }
            // An output is captured as what it plays (its monitor); the session manager links to it only when told.
            if node.isSink { description += " stream.capture.sink=true" }
            // By serial, which is what a number in target.object means to the session manager (not the id).
            target = node.serial.map(String.init) ?? node.name
        }
        let properties = pw_properties_new_string(description)
        if let target { pw_properties_set(properties, "target.object", target) }
        let input = try PipeWireInputStream(on: connection, name: "screenpub audio", properties: properties, handler: self)
        self.input = input
        let status = podBuffer.withUnsafeMutableBufferPointer { buffer in
            // PW_ID_ANY: the target comes from the properties.
            input.connect(to: UInt32.max, params: [CPipeWireShims_audioFormat(buffer.baseAddress, UInt32(buffer.count), UInt32(Self.sampleRate), 0)])
        }
        guard status >= 0 else {
            throw PipeWireCaptureError(.streamFailed, "cannot capture \(options.input): \(String(cString: strerror(-status)))")
        }
    }

    /// The node `wanted` names, by id or `node.name`: an output, an input or an application's stream. Throws
    /// naming the sound nodes that exist when none is called so, or when it carries no sound.
    static func find(_ wanted: String, among nodes: [PipeWireNode]) throws(PipeWireCaptureError) -> PipeWireNode {
        let named = UInt32(wanted).flatMap { id in nodes.first { $0.id == id } }
            ?? nodes.first { $0.name == wanted && $0.carriesSound } ?? nodes.first { $0.name == wanted }
        guard let node = named else {
            let sound = nodes.filter(\.carriesSound).compactMap { node in node.name.map { "\($0) (\(node.mediaClass ?? "?"))" } }
            let known = sound.isEmpty ? "it lists no sound nodes" : "its sound nodes are \(sound.joined(separator: ", "))"
            throw PipeWireCaptureError(.streamFailed, "PipeWire has no node \(wanted) to capture: \(known) (`pw-cli ls Node` lists them by id and node.name)")
        }
        guard node.carriesSound else {
            throw PipeWireCaptureError(
                .streamFailed, "PipeWire node \(wanted) is \(node.mediaClass.map { "a \($0)" } ?? "not an audio node"), not sound: give an output, an input or an application's sound stream")
        }
        return node
    }

    /// Captures until `stop` is signalled (returns) or the stream fails (throws), handing every buffer to
    /// `consumer` on this thread.
    public func run(stop: StopSignal, consumer: any AudioSampleConsumer) throws {
        self.consumer = consumer
        defer { self.consumer = nil }
        try connection.whileEntered {
            while !stop.isStopped {
                try iterate(timeoutMilliseconds: 100)
                if let consumerError {
                    self.consumerError = nil
                    throw consumerError
                }
            }
        }
    }

    private func iterate(timeoutMilliseconds: Int32) throws(PipeWireCaptureError) {
        try connection.iterate(timeoutMilliseconds: timeoutMilliseconds)
        if let failure { throw failure }
    }

    // MARK: Callbacks (on this thread, inside iterate)

    func stateChanged(_ state: pw_stream_state, error: String?) {
        stateDescription = String(cString: pw_stream_state_as_string(state))
        switch state {
        case PW_STREAM_STATE_ERROR:
            failure = PipeWireCaptureError(.streamFailed, "capturing \(options.input) failed: \(error ?? "stream error")")
        case PW_STREAM_STATE_UNCONNECTED where channels == 0:
            // The session manager found nothing to link the stream to.
            let missing = switch options.input {
            case .desktop: "PipeWire has no audio output whose sound could be captured (`wpctl status` lists the sinks)"
            case .microphone: "PipeWire has no audio input to capture (`wpctl status` lists the sources)"
            case .node(let node): "PipeWire has no node \(node) to capture (`pw-cli ls Node` lists them by id and node.name)"
            }
            failure = PipeWireCaptureError(.streamFailed, "cannot capture \(options.input): \(missing)")
        case PW_STREAM_STATE_UNCONNECTED:
            failure = PipeWireCaptureError(.streamFailed, "lost \(options.input): PipeWire disconnected the stream (did the pipewire daemon stop, or the node go away?)")
        default:
            break
        }
    }

    func paramChanged(_ id: UInt32, _ param: UnsafePointer<spa_pod>?) {
        guard id == SPA_PARAM_Format.rawValue, let param else { return }
        var format: UInt32 = 0, rate: UInt32 = 0, channels: UInt32 = 0
        guard CPipeWireShims_parseAudioFormat(param, &format, &rate, &channels) == 0 else {
            failure = PipeWireCaptureError(.unsupportedFormat, "\(options.input) offers no raw audio format")
            return
        }
        if channels > 2 && self.channels == 0, let stream {
            // Surround (a 5.1 output's monitor): ask the adapter for a stereo downmix instead.
            logger.info("\(options.input) has \(channels) channels: capturing a stereo downmix")
            podBuffer.withUnsafeMutableBufferPointer { buffer in
                var params: [UnsafePointer<spa_pod>?] = [
                    CPipeWireShims_audioFormat(buffer.baseAddress, UInt32(buffer.count), UInt32(Self.sampleRate), 2)
                ]
                _ = pw_stream_update_params(stream, &params, UInt32(params.count))
            }
            return
        }
        guard format == SPA_AUDIO_FORMAT_F32_LE.rawValue, rate == UInt32(Self.sampleRate), channels == 1 || channels == 2 else {
            failure = PipeWireCaptureError(.unsupportedFormat, "\(options.input) offers no 48 kHz mono or stereo float format")
            return
        }
        if self.channels != 0 && self.channels != Int(channels) {
            failure = PipeWireCaptureError(.unsupportedFormat, "\(options.input) changed from \(self.channels) to \(channels) channels")
            return
        }
        self.channels = Int(channels)
        logger.info("capturing \(options.input): 48 kHz, \(channels == 1 ? "mono" : "stereo")")
    }

    /// Buffers taken in one callback (more than one when this thread fell behind the graph), oldest first.
    private var taken = [UnsafeMutablePointer<pw_buffer>?](repeating: nil, count: 32)

    /// Takes every buffer PipeWire has for us and stamps them backwards from the newest: its last sample was
    /// captured `delay` (plus what the resampler still holds) before the graph cycle that delivered it, and
    /// each older buffer ends where the next one starts. Buffers that queued up while this thread was busy
    /// thus keep their own capture times.
    func process() {
        guard let stream else { return }
        var count = 0
        while count < taken.count, let buffer = pw_stream_dequeue_buffer(stream) {
            taken[count] = buffer
            count += 1
        }
        guard count > 0 else { return }
        defer {
            for index in 0..<count {
                pw_stream_queue_buffer(stream, taken[index])
                taken[index] = nil
            }
        }
        guard channels > 0, consumerError == nil, let consumer else { return }
        let now = clock.nanoseconds(fromTicks: clock.now())
        var cycle: Int64 = 0, delay: Int64 = 0, buffered: Int64 = 0
        var end = now
        if CPipeWireShims_streamTime(stream, &cycle, &delay, &buffered), cycle > 0, UInt64(cycle) <= now, delay >= 0,
            delay < 1_000_000_000, buffered >= 0, buffered < Int64(Self.sampleRate)
        {
            end = UInt64(cycle) - UInt64(delay) - UInt64(buffered) * 1_000_000_000 / UInt64(Self.sampleRate)
        }
        let latency = Double(now - min(now, end)) / 1e6
        captureLatencyMilliseconds = captureLatencyMilliseconds.map { 0.95 * $0 + 0.05 * latency } ?? latency
        // The first `count` places hold the buffers just taken (none is nil).
        let buffers = taken[..<count].lazy.compactMap { $0 }
        var remaining: UInt64 = 0
        for buffer in buffers { remaining += UInt64(samples(in: buffer).count / channels) }
        for buffer in buffers {
            let samples = samples(in: buffer)
            let first = end - min(end, remaining * 1_000_000_000 / UInt64(Self.sampleRate))
            remaining -= UInt64(samples.count / channels)
            guard !samples.isEmpty else { continue }
            do {
                try consumer.consume(samples, channels: channels, captureTime: clock.mediaTime(fromTicks: clock.ticks(fromNanoseconds: first)))
            } catch {
                consumerError = error
                return
            }
        }
    }

    /// The whole frames of interleaved float samples a buffer holds (none when it holds nothing readable).
    private func samples(in buffer: UnsafeMutablePointer<pw_buffer>) -> UnsafeBufferPointer<Float> {
        guard let spaBuffer = buffer.pointee.buffer, spaBuffer.pointee.n_datas > 0, let data = spaBuffer.pointee.datas,
            let base = data.pointee.data, let chunk = data.pointee.chunk, data.pointee.maxsize > 0
        else { return UnsafeBufferPointer(start: nil, count: 0) }
        let offset = Int(chunk.pointee.offset) % Int(data.pointee.maxsize)
        let bytes = min(Int(chunk.pointee.size), Int(data.pointee.maxsize) - offset)
        let count = bytes / MemoryLayout<Float>.size / channels * channels
        return UnsafeBufferPointer(start: (base + offset).assumingMemoryBound(to: Float.self), count: max(0, count))
    }
}

@available(*, unavailable, message: "belongs to the audio thread")
extension PipeWireAudioSource: Sendable {}
