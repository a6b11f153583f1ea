import Foundation
public import ScreenMedia
public import ScreenRecording

// What screensub shows and writes of a stream, as a library (tested without the command): decoded pictures as
// PNGs, live frames and recorded frames as lines or JSON, HLS events.

/// Every decoded picture as DIR/frame-NNNNNN.png.
public final class PNGSequence: VideoRenderer {
    public let directory: String
    private let writer = PNGWriter()
    private var index = 0

    public init(directory: String) throws {
        self.directory = directory
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw RecordingError(.cannotOpen, "cannot create the --frames directory \(directory): \(error.localizedDescription)")
        }
    }

    public func render(_ frame: VideoFrame) throws {
        index += 1
        try writer.write(frame, to: "\(directory)/frame-\(String(format: "%06d", index)).png")
    }
}

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

/// How screensub prints a recording's frames.
public enum RecordedFramePrinter {
    /// A frame of a recording as screensub prints it: a line for people, or one JSON object.
    public static func line(_ frame: RecordedFrame, size: (Int, Int), json: Bool) -> String {
        let metadata = frame.cue?.metadata
        if json {
            var object: [String: Any] = [
                "index": frame.index, "time": frame.timestamp.seconds, "keyframe": frame.isKeyframe,
                "bytes": frame.payload.count,
            ]
            if let cue = frame.cue {
                object["captureTime"] = cue.captureTime.description
                object["wallClock"] = FrameMetadata.iso8601(cue.wallClock).text
                object["metadataBase64"] = Data(cue.metadata.bytes).base64EncodedString()
                if let text = cue.metadata.text { object["metadata"] = text }
            }
            if size.0 > 0 { object["width"] = size.0; object["height"] = size.1 }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
            return String(decoding: data, as: UTF8.self)
        }
        var line = String(format: "frame %5d  t=%8.3fs  %@  %7d B", frame.index, frame.timestamp.seconds,
                          frame.isKeyframe ? "key  " : "delta", frame.payload.count)
        if let cue = frame.cue {
            line += "  capture=\(cue.captureTime)  wall=\(FrameMetadata.iso8601(cue.wallClock))"
            line += "  metadata=" + (metadata?.text.map { "\"\($0)\"" } ?? "0x\(metadata?.description ?? "")")
        } else {
            line += "  (no metadata cue)"
        }
        return line
    }
}

extension HLSFollower.Event {
    /// The event as screensub prints it: a line for people, or one JSON object.
    public func line(json: Bool) -> String {
        let event = self
        var object: [String: Any]
        switch event {
        case .segment(let sequence, let date, let duration):
            object = ["event": "segment", "sequence": sequence]
            if let duration { object["duration"] = duration }
            if let date { object["programDateTime"] = date }
            if !json { return "segment \(sequence)  \(date ?? "(no date)")  " + (duration.map { String(format: "%.3f s", $0) } ?? "(being written)") }
        case .dateRange(let attributes):
            object = ["event": "dateRange", "attributes": attributes]
            if !json {
                let rest = attributes.sorted { $0.key < $1.key }.filter { $0.key != "ID" }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
                return "daterange \(attributes["ID"] ?? "?")  \(rest)"
            }
        case .frame(let seconds, let metadata, let text, let captureTime):
            // When it was read: beside its capture time, how far behind the player is.
            object = [
                "event": "frame", "time": seconds, "metadataBase64": Data(metadata).base64EncodedString(),
                "receivedAtMilliseconds": WallClockTime.now().millisecondsSince1970,
            ]
            if let text { object["metadata"] = text }
            if let captureTime { object["captureTime"] = captureTime }
            if !json {
                let shown = text.map { "\"\($0)\"" } ?? "0x" + metadata.map { String(format: "%02x", $0) }.joined()
                return String(format: "frame t=%9.3fs  ", seconds) + "capture=\(captureTime ?? "?")  metadata=\(shown)"
            }
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
