import Foundation
public import ScreenMedia
import ScreenRecording

/// Prints each live frame as it arrives: index, key/delta, bytes, size, latency, capture time, metadata; and
/// each audio frame, marked as such (bytes, channels, length, silence, latency, capture time).
public final class LiveFramePrinter: EncodedFrameSink, EncodedAudioSink {
    public let json: Bool
    /// Where each line goes (standard output, at once, for screensub).
    private let output: @Sendable (String) -> Void
    private var index = 0
    private var audioIndex = 0
    /// Made when the stream is subscribed: frames captured before this are the relay's catch-up (the last keyframe
    /// and the deltas since), whose age is not a latency.
    private let subscribedAt = WallClockTime.now()

    public func writeAudio(_ frame: EncodedAudioFrame) throws {
        audioIndex += 1
        let received = WallClockTime.now().millisecondsSince1970
        let latency = received - frame.wallClock.millisecondsSince1970
        let milliseconds = frame.samples * 1000 / 48_000
        if json {
            let object: [String: Any] = [
                "kind": "audio", "index": audioIndex, "codec": frame.codec.rawValue, "bytes": frame.payload.count,
                "channels": frame.channels, "samples": frame.samples, "silence": frame.isSilence,
                "captureTime": frame.captureTime.description, "wallClock": FrameMetadata.iso8601(frame.wallClock).text ?? "",
                "latencyMilliseconds": latency,
            ]
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
                output(String(decoding: data, as: UTF8.self))
            }
            return
        }
        output(String(format: "audio %5d  %@  %7d B  %dch %d ms%@  latency %lld ms  capture=%@",
                     audioIndex, frame.codec.rawValue, frame.payload.count, frame.channels, milliseconds,
                     frame.isSilence ? " silence" : "", latency, frame.captureTime.description))
    }

    public init(json: Bool, output: @escaping @Sendable (String) -> Void) {
        self.json = json
        self.output = output
    }

    public func write(_ frame: EncodedFrame) throws {
        index += 1
        // Publisher's and our wall clocks: exact on one machine, otherwise as good as their sync.
        let received = WallClockTime.now().millisecondsSince1970
        let latency = received - frame.wallClock.millisecondsSince1970
        let catchUp = frame.isCatchUp || frame.wallClock.millisecondsSince1970 < subscribedAt.millisecondsSince1970
        if json {
            var object: [String: Any] = [
                "kind": "video", "index": index, "keyframe": frame.isKeyframe, "layer": frame.temporalLayer, "bytes": frame.payload.count,
                "width": frame.width, "height": frame.height, "captureTime": frame.captureTime.description,
                "wallClock": FrameMetadata.iso8601(frame.wallClock).text ?? "", "catchUp": catchUp, "receivedAtMilliseconds": received,
                "metadataBase64": Data(frame.metadata.bytes).base64EncodedString(),
            ]
            // A catch-up frame's age says when the picture was drawn, not how long it travelled.
            if !catchUp { object["latencyMilliseconds"] = latency }
            if let text = frame.metadata.text { object["metadata"] = text }
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
                output(String(decoding: data, as: UTF8.self))
            }
            return
        }
        let metadata = frame.metadata.text.map { "\"\($0)\"" } ?? "0x\(frame.metadata.description)"
        let timing = catchUp
            ? String(format: "catch-up (drawn %.1f s ago)", Double(latency) / 1000)
            : "latency \(latency) ms"
        output(String(format: "frame %5d  %@  %7d B  %dx%d  %@  capture=%@  metadata=%@",
                     index, frame.isKeyframe ? "key  " : "delta", frame.payload.count, frame.width, frame.height, timing,
                     frame.captureTime.description, metadata))
    }

    public func finish() throws {}
}
