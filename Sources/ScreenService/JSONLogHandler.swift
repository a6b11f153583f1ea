import Foundation
public import Logging
import Synchronization

/// One JSON object per log line: `{"time","level","label","source","message","metadata"?}`.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public let label: String
    /// Lines from several threads must not interleave.
    private static let output = Mutex(())

    public init(label: String) { self.label = label }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var object: [String: Any] = [
            "time": Self.timestamp(), "level": event.level.rawValue, "label": label, "source": event.source,
            "message": event.message.description,
        ]
        if let error = event.error { object["error"] = "\(error)" }
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        if !merged.isEmpty { object["metadata"] = merged.mapValues { $0.description } }
        guard var data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        data.append(UInt8(ascii: "\n"))
        Self.output.withLock { _ in FileHandle.standardError.write(data) }
    }

    /// ISO-8601 UTC with milliseconds.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var parts = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday, parts.tm_hour,
            parts.tm_min, parts.tm_sec, Int(now.tv_nsec / 1_000_000))
    }
}
