import Foundation
public import ScreenMedia
import ScreenRecording

/// Several sinks fed the same frames, in order; audio frames go to those that take them.
public final class SinkGroup: EncodedFrameSink, EncodedAudioSink {
    private let sinks: [any EncodedFrameSink]
    public init(_ sinks: [any EncodedFrameSink]) { self.sinks = sinks }
    public func write(_ frame: EncodedFrame) throws { for sink in sinks { try sink.write(frame) } }
    public func writeAudio(_ frame: EncodedAudioFrame) throws {
        for case let sink as any EncodedAudioSink in sinks { try sink.writeAudio(frame) }
    }
    public func finish() throws { for sink in sinks { try sink.finish() } }
}
