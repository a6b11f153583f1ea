import Foundation
import ScreenMedia
import ScreenRecording

// What screensub shows and writes of a stream lives in this folder, as a library tested without the command:
// decoded pictures as PNGs, live frames and recorded frames as lines or JSON, and here, HLS events.

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
