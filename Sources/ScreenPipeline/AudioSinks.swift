public import ScreenMedia
import Synchronization

/// The sinks audio frames go to, filled in once the share's sinks exist (the audio thread may start first).
public final class AudioSinks: Sendable {
    private let sinks = Mutex<[any ConcurrentAudioSink]>([])

    public init(_ sinks: [any ConcurrentAudioSink] = []) {
        self.sinks.withLock { $0 = sinks }
    }

    public func set(_ sinks: [any ConcurrentAudioSink]) { self.sinks.withLock { $0 = sinks } }

    func write(_ frame: EncodedAudioFrame) throws {
        // Copied out of the lock (a retain each, no allocation): a sink may take its own locks.
        let current = sinks.withLock { $0 }
        for sink in current { try sink.writeAudio(frame) }
    }
}
