import Foundation
public import ScreenMedia
import ScreenRecording

/// A recording sink that opens its WebM file at the first video frame, when the picture size is known, with an
/// Opus track when the stream has sound. Video (capture thread) and audio (audio thread) may be written at once.
public final class RecordingSink: EncodedFrameSink, ConcurrentAudioSink, @unchecked Sendable {
    // @unchecked: `writer` is touched only with `lock` held; the rest is immutable.
    public let path: String
    private let framesPerSecond: Double
    private let audio: AudioProperties?
    private let audioPreSkip: Int
    private let lock = NSLock()
    private var writer: WebMWriter?
    private var finished = false

    /// `audio`: the stream's sound, for an Opus track (`audioPreSkip`: the encoder's lookahead in samples).
    public init(path: String, framesPerSecond: Double, audio: AudioProperties? = nil, audioPreSkip: Int = 312) {
        self.path = path
        self.framesPerSecond = framesPerSecond
        self.audio = audio
        self.audioPreSkip = audioPreSkip
    }

    public var framesWritten: Int { lock.withLock { writer?.framesWritten ?? 0 } }
    public var audioFramesWritten: Int { lock.withLock { writer?.audioFramesWritten ?? 0 } }

    public func write(_ frame: EncodedFrame) throws {
        try lock.withLock {
            if writer == nil {
                writer = try WebMWriter(
                    path: path, codec: frame.codec, width: frame.width, height: frame.height,
                    framesPerSecond: framesPerSecond, audio: audio, audioPreSkip: audioPreSkip,
                    format: CodedVideoFormat(codec: frame.codec, keyframe: frame.payload))
            }
            try writer?.write(frame)
        }
    }

    /// Sound before the first picture is left out (the file's time starts at it), and sound after the end
    /// (the audio thread may still be stopping).
    public func writeAudio(_ frame: EncodedAudioFrame) throws {
        try lock.withLock {
            guard !finished, let writer, writer.hasAudio else { return }
            try writer.writeAudio(frame)
        }
    }

    public func finish() throws {
        try lock.withLock {
            finished = true
            try writer?.finish()
        }
    }
}
