import Foundation
import ScreenMedia
public import ScreenRecording

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
