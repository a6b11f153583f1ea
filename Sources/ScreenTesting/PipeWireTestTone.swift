import CPipeWire
import CPipeWireShims
import Foundation
import ScreenMedia

/// A PipeWire audio source for tests, standing in for a microphone or a desktop's output: a native `pw_stream`
/// node of class `Audio/Source` playing a known signal — a steady tone, silence, or beeps at given instants on
/// the monotonic clock (for lining sound up with pictures). It runs on a `pw_thread_loop` of its own.
///
/// Its timing is that of an ideal device: the samples of the buffer PipeWire asks for in the graph cycle that
/// starts at `now` are those captured during the buffer's length before `now`. A beep starting at instant `t`
/// begins at the sample of that time.
public final class PipeWireTestTone: @unchecked Sendable {
    // @unchecked: every libpipewire object and the signal are touched only with the thread loop's lock held (or
    // on the loop's thread, in callbacks, which it runs with the lock held — hence no RT_PROCESS, whose data
    // thread would read the signal while `play` replaces it), which is how libpipewire's thread loop is meant
    // to be used.
    public enum Signal: Sendable, Equatable {
        case silence
        /// A sine of this frequency (Hz) and amplitude (0–1).
        case tone(frequency: Double, amplitude: Double)
        /// Something like music for a codec: a chord whose notes change every half second, with a tremolo and
        /// a little noise (Opus spends its bit rate on it as on a song).
        case music
        /// Silence but for beeps (a sine of `frequency`) starting at these `CLOCK_MONOTONIC` instants (ns), each
        /// `milliseconds` long.
        case beeps(frequency: Double, at: [UInt64], milliseconds: Double)
    }

    public static let sampleRate = 48_000
    public let name: String
    public let channels: Int
    private let connection: PipeWireTestConnection
    private let closed = Locked(false)
    private var stream: OpaquePointer?
    private var listener: UnsafeMutablePointer<spa_hook>?
    private var podBuffer = [UInt8](repeating: 0, count: 1024)
    private var signal: Signal
    private var samplesProduced = 0

    /// Adds the node `name` to `pipewire`; it plays `signal` whenever something captures it.
    public init(on pipewire: PrivatePipeWire, name: String, channels: Int = 2, signal: Signal) throws {
        self.name = name
        self.channels = channels
        self.signal = signal
        connection = try PipeWireTestConnection(to: pipewire, name: "test-tone", who: "the test tone")
        let core = connection.core
        pw_thread_loop_lock(connection.threadLoop)
        defer { pw_thread_loop_unlock(connection.threadLoop) }
        let properties = pw_properties_new_string("media.class=Audio/Source node.latency=480/48000")
        pw_properties_set(properties, "node.name", name)
        guard let stream = pw_stream_new(core, name, properties) else { throw PrivatePipeWire.Failure(description: "pw_stream_new failed") }
        self.stream = stream
        var events = pw_stream_events()
        events.version = UInt32(PW_VERSION_STREAM_EVENTS)
        // `data` is the listener's context, `self` (given below): never nil.
        events.process = { data in
            Unmanaged<PipeWireTestTone>.fromOpaque(data!).takeUnretainedValue().produce()
        }
        listener = CPipeWireShims_addStreamListener(stream, &events, Unmanaged.passUnretained(self).toOpaque())
        let status = podBuffer.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var params: [UnsafePointer<spa_pod>?] = [
                CPipeWireShims_audioFormat(buffer.baseAddress, UInt32(buffer.count), UInt32(Self.sampleRate), UInt32(channels))
            ]
            return pw_stream_connect(
                stream, SPA_DIRECTION_OUTPUT, UInt32.max,  // PW_ID_ANY
                pw_stream_flags(PW_STREAM_FLAG_MAP_BUFFERS.rawValue), &params, 1)
        }
        guard status >= 0 else { throw PrivatePipeWire.Failure(description: "the test tone cannot connect its stream: \(status)") }
        pipewire.closeBeforeStopping { [weak self] in self?.close() }
    }

    deinit { close() }

    /// Removes the node and disconnects, ending the loop's thread. Idempotent.
    public func close() {
        guard closed.withLock({ closed in defer { closed = true }; return !closed }) else { return }
        locked {
            if let stream {
                CPipeWireShims_removeStreamListener(listener)
                listener = nil
                pw_stream_destroy(stream)
            }
            stream = nil
        }
        connection.close()
    }

    /// Plays `signal` from the next buffer on.
    public func play(_ signal: Signal) { locked { self.signal = signal } }

    /// Samples per channel produced so far (0 until something captures the node).
    public var produced: Int { locked { samplesProduced } }

    /// Waits until PipeWire lists the node (a capture stream can then target it by name); up to 10 s.
    public func waitUntilListed(on pipewire: PrivatePipeWire) async throws {
        for _ in 0..<200 {
            let listing = try await ChildProcess.run("/usr/bin/pw-cli", ["ls", "Node"], environment: pipewire.environment, timeout: 5)
            if listing.standardOutput.contains("node.name = \"\(name)\"") { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw PrivatePipeWire.Failure(description: "PipeWire does not list the test tone \(name)")
    }

    private func locked<T>(_ body: () -> T) -> T { connection.locked(body) }

    // MARK: On the loop's thread

    private func produce() {
        guard let stream, let buffer = pw_stream_dequeue_buffer(stream) else { return }
        defer { pw_stream_queue_buffer(stream, buffer) }
        guard let spaBuffer = buffer.pointee.buffer, spaBuffer.pointee.n_datas > 0, let data = spaBuffer.pointee.datas,
            let base = data.pointee.data
        else { return }
        let stride = MemoryLayout<Float>.size * channels
        var frames = Int(data.pointee.maxsize) / stride
        if buffer.pointee.requested > 0 { frames = min(frames, Int(buffer.pointee.requested)) }
        var cycle: Int64 = 0, delay: Int64 = 0, buffered: Int64 = 0
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        var end = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
        if CPipeWireShims_streamTime(stream, &cycle, &delay, &buffered), cycle > 0 { end = cycle }
        let start = end - Int64(frames) * 1_000_000_000 / Int64(Self.sampleRate)
        let samples = base.assumingMemoryBound(to: Float.self)
        for frame in 0..<frames {
            let time = start + Int64(frame) * 1_000_000_000 / Int64(Self.sampleRate)
            let value = Float(sample(at: time))
            for channel in 0..<channels { samples[frame * channels + channel] = value }
        }
        samplesProduced += frames
        data.pointee.chunk.pointee.offset = 0
        data.pointee.chunk.pointee.stride = Int32(stride)
        data.pointee.chunk.pointee.size = UInt32(frames * stride)
    }

    /// The signal's value at monotonic instant `time` (ns).
    private func sample(at time: Int64) -> Double {
        let seconds = Double(time) / 1e9
        switch signal {
        case .silence:
            return 0
        case .tone(let frequency, let amplitude):
            return amplitude * sin(2 * .pi * frequency * seconds)
        case .music:
            let notes: [Double] = [220, 247, 262, 294, 330, 349, 392, 440]
            let step = Int(seconds * 2)
            let chord = (0..<3).map { notes[(step + $0 * 2) % notes.count] * (1 + Double($0 / 2)) }
            let tremolo = 0.75 + 0.25 * sin(2 * .pi * 3 * seconds)
            return tremolo * chord.reduce(0) { $0 + 0.15 * sin(2 * .pi * $1 * seconds) } + Double.random(in: -0.01...0.01)
        case .beeps(let frequency, let instants, let milliseconds):
            for instant in instants where time >= Int64(instant) && Double(time - Int64(instant)) < milliseconds * 1e6 {
                return 0.5 * sin(2 * .pi * frequency * Double(time - Int64(instant)) / 1e9)
            }
            return 0
        }
    }
}
