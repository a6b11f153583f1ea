import Synchronization

/// Counters the relay exposes at `/metrics` in the Prometheus text format.
public final class RelayMetrics: Sendable {
    private let counters = Mutex<[String: Int]>([:])

    public init() {}

    func add(_ name: Name, _ value: Int = 1) {
        counters.withLock { $0[name.rawValue, default: 0] += value }
    }

    func set(_ name: Name, _ value: Int) {
        counters.withLock { $0[name.rawValue] = value }
    }

    public func value(_ name: Name) -> Int { counters.withLock { $0[name.rawValue] ?? 0 } }

    /// Counts one thing a limit refused (`screenrelay_refused_total{limit="…"}`).
    func refused(_ limit: Limit, _ count: Int = 1) {
        counters.withLock { $0[Self.refusedName + limit.rawValue, default: 0] += count }
    }

    public func value(_ limit: Limit) -> Int { counters.withLock { $0[Self.refusedName + limit.rawValue] ?? 0 } }

    private static let refusedName = "screenrelay_refused_total:"

    /// The limits a client can meet (docs/protocol.md, "Limits a connection meets").
    public enum Limit: String, CaseIterable, Sendable {
        case totalConnections = "connections"
        case connectionsPerAddress = "connections_per_address"
        case requestHeadTimeout = "request_head_timeout"
        case idleTimeout = "idle_timeout"
        case messageSize = "message_size"
        case messageDeadline = "message_deadline"
        case sessionCap = "sessions"
        case streamsPerConnection = "streams_per_connection"
        case streamName = "stream_name"
        case signalRate = "signal_rate"
        case metricsToken = "metrics_token"
    }

    public enum Name: String, CaseIterable, Sendable {
        case sessions = "screenrelay_sessions"
        case connections = "screenrelay_connections"
        case streams = "screenrelay_streams"
        case framesIn = "screenrelay_frames_in_total"
        case bytesIn = "screenrelay_bytes_in_total"
        case framesOut = "screenrelay_frames_out_total"
        case bytesOut = "screenrelay_bytes_out_total"
        case framesDropped = "screenrelay_frames_dropped_total"
        case audioFramesIn = "screenrelay_audio_frames_in_total"
        case audioFramesOut = "screenrelay_audio_frames_out_total"
        case audioFramesDropped = "screenrelay_audio_frames_dropped_total"
        case keyframeRequests = "screenrelay_keyframe_requests_total"
        case protocolErrors = "screenrelay_protocol_errors_total"
        case rejectedTokens = "screenrelay_rejected_tokens_total"
        case signals = "screenrelay_signals_total"
        case overflowCloses = "screenrelay_connections_closed_unread_total"

        var help: String {
            switch self {
            case .sessions: "Sessions that exist."
            case .connections: "WebSocket clients that said hello."
            case .streams: "Published streams."
            case .signals: "Signals sent by clients or the HTTP API (valid or not)."
            case .framesIn: "Video frames received from publishers."
            case .audioFramesIn: "Audio frames received from publishers."
            case .audioFramesOut: "Audio frames written to subscribers."
            case .audioFramesDropped: "Audio frames not sent to a subscriber that was too far behind."
            case .bytesIn: "Media bytes (video and audio) received from publishers."
            case .framesOut: "Video frames written to subscribers."
            case .bytesOut: "Media bytes (video and audio) written to subscribers."
            case .framesDropped: "Frames not sent to a subscriber that was too far behind or waiting for a keyframe."
            case .keyframeRequests: "Keyframe requests sent to publishers."
            case .protocolErrors: "Connections closed for malformed or unexpected messages."
            case .rejectedTokens: "Hello messages refused for their token."
            case .overflowCloses: "Connections closed because they let their queue of control messages overflow (they do not read)."
            }
        }

        var isGauge: Bool { self == .sessions || self == .connections || self == .streams }
    }

    /// The Prometheus text exposition.
    public func exposition() -> String {
        let values = counters.withLock { $0 }
        var text = ""
        for name in Name.allCases {
            text += "# HELP \(name.rawValue) \(name.help)\n"
            text += "# TYPE \(name.rawValue) \(name.isGauge ? "gauge" : "counter")\n"
            text += "\(name.rawValue) \(values[name.rawValue] ?? 0)\n"
        }
        text += "# HELP screenrelay_refused_total What each limit refused: connections, requests, messages, sessions, streams.\n"
        text += "# TYPE screenrelay_refused_total counter\n"
        for limit in Limit.allCases {
            text += "screenrelay_refused_total{limit=\"\(limit.rawValue)\"} \(values[Self.refusedName + limit.rawValue] ?? 0)\n"
        }
        return text
    }
}
