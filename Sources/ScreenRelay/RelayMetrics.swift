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

    /// Adds to one series of a labelled family (`family{label="value"}`).
    func add(_ family: Family, _ label: String, _ value: Int = 1) {
        guard value != 0 else { return }
        counters.withLock { $0[family.key(label), default: 0] += value }
    }

    public func value(_ family: Family, _ label: String) -> Int { counters.withLock { $0[family.key(label)] ?? 0 } }

    /// Families of series told apart by one label, each series appearing once it has been counted.
    public enum Family: String, CaseIterable, Sendable {
        case keyframeRequestsByCause = "screenrelay_keyframe_requests_by_cause_total"
        case subscribersByLayer = "screenrelay_subscribers"
        case publisherEstimatedKbps = "screenrelay_publisher_estimated_kbps"
        case publisherTargetKbps = "screenrelay_publisher_target_kbps"

        var label: String {
            switch self {
            case .keyframeRequestsByCause: "cause"
            case .subscribersByLayer: "layer"
            case .publisherEstimatedKbps, .publisherTargetKbps: "stream"
            }
        }

        var help: String {
            switch self {
            case .keyframeRequestsByCause:
                "Keyframe requests sent to publishers, by cause: new_subscriber, subscriber_behind (not even layer 0 fitted its link), subscriber_asked, relay (recording, HLS)."
            case .subscribersByLayer:
                "Subscriptions by the highest temporal layer they get now (lower: thinned for a slow link); waiting: skipped to the next keyframe."
            case .publisherEstimatedKbps: "What each publisher estimates its uplink carries (kbit/s), as it last reported (session/stream)."
            case .publisherTargetKbps: "Each publisher's encoder target (kbit/s), as it last reported (session/stream)."
            }
        }

        var isGauge: Bool { self != .keyframeRequestsByCause }

        fileprivate func key(_ label: String) -> String { rawValue + "\u{1}" + label }
    }

    /// The limits a client can meet (docs/protocol.md, "Limits a connection meets").
    public enum Limit: String, CaseIterable, Sendable {
        case totalConnections = "connections"
        case connectionsPerAddress = "connections_per_address"
        case requestHeadTimeout = "request_head_timeout"
        case requestLineSize = "request_line_size"
        case requestHeadSize = "request_head_size"
        case idleTimeout = "idle_timeout"
        case writeStall = "write_stall"
        case messageSize = "message_size"
        case messageDeadline = "message_deadline"
        case sessionCap = "sessions"
        case streamsPerConnection = "streams_per_connection"
        case streamName = "stream_name"
        case signalRate = "signal_rate"
        case metricsToken = "metrics_token"
        case captureTime = "capture_time"
        case keyframeRequests = "keyframe_requests"
        case host = "host"
        case origin = "origin"
        case markerRate = "marker_rate"
        case archiveRate = "archive_rate"
        case archiveQuota = "archive_quota"
        case hlsSegmentSize = "hls_segment"
        case hlsMemory = "hls_memory"
        case hlsWaiting = "hls_waiting"
        case hlsWaitingPerClient = "hls_waiting_per_client"
        case streamsPerSession = "streams_per_session"
        case streamsPerToken = "streams_per_token"
        case connectionsPerToken = "connections_per_token"
        case connectionsPerSession = "connections_per_session"
        case frameRate = "frame_rate"
        case tlsHandshake = "tls_handshake"
        case subscriptionRate = "subscription_rate"
        case streamChangeRate = "stream_change_rate"
        case joinRate = "join_rate"
        case queuedControl = "queued_control"
        case queuedBytes = "queued_bytes"
        case relayQueuedBytes = "relay_queued_bytes"
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
        case framesThinned = "screenrelay_frames_thinned_total"
        case framesFittedIn = "screenrelay_frames_fitted_in_total"
        case subscribersEvicted = "screenrelay_subscribers_evicted_total"
        case queuedBytes = "screenrelay_queued_bytes"

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
            case .framesThinned: "Video frames of a higher temporal layer not sent to a subscriber whose link could not carry them (it got the lower layers)."
            case .framesFittedIn: "Video frames above a thinned subscriber's temporal layers sent to it all the same, because its link had room for them before the next layer-0 frame."
            case .subscribersEvicted: "Subscribers closed because they took none of their queued media for the stall limit."
            case .overflowCloses: "Connections closed because they let their queue overflow (they do not read): its control messages, its bytes, or their share of the relay's."
            case .queuedBytes: "Bytes queued to all connections, as their budgets count them (a frame queued for many subscribers counts once for each)."
            }
        }

        var isGauge: Bool { self == .sessions || self == .connections || self == .streams || self == .queuedBytes }
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
        for family in Family.allCases {
            text += "# HELP \(family.rawValue) \(family.help)\n"
            text += "# TYPE \(family.rawValue) \(family.isGauge ? "gauge" : "counter")\n"
            let prefix = family.key("")
            for (key, value) in values.sorted(by: { $0.key < $1.key }) where key.hasPrefix(prefix) {
                // Gauges of things that are gone (a stream ended) leave the exposition.
                if family.isGauge && value == 0 { continue }
                text += "\(family.rawValue){\(family.label)=\"\(key.dropFirst(prefix.count))\"} \(value)\n"
            }
        }
        return text
    }
}
