extension RelayMetrics {
    /// The relay's series without labels. Its raw value is its place in ``RelayMetrics``' series, so that a frame
    /// counted reaches its counter by an index, not by hashing a name.
    public enum Name: Int, CaseIterable, Sendable {
        case sessions, connections, streams
        case framesIn, bytesIn, framesOut, bytesOut, framesDropped
        case audioFramesIn, audioFramesOut, audioFramesDropped
        case keyframeRequests, protocolErrors, rejectedTokens, signals, overflowCloses
        case framesThinned, framesFittedIn, subscribersEvicted, queuedBytes
        case renditionsStarted, renditionsStopped

        /// Its name at `/metrics`, and its HELP text there.
        var exposed: (name: String, help: String) {
            switch self {
            case .sessions: ("screenrelay_sessions", "Sessions that exist.")
            case .connections: ("screenrelay_connections", "WebSocket clients that said hello.")
            case .streams: ("screenrelay_streams", "Published streams.")
            case .framesIn: ("screenrelay_frames_in_total", "Video frames received from publishers.")
            case .bytesIn: ("screenrelay_bytes_in_total", "Media bytes (video and audio) received from publishers.")
            case .framesOut: ("screenrelay_frames_out_total", "Video frames written to subscribers.")
            case .bytesOut: ("screenrelay_bytes_out_total", "Media bytes (video and audio) written to subscribers.")
            case .framesDropped:
                ("screenrelay_frames_dropped_total", "Frames not sent to a subscriber that was too far behind or waiting for a keyframe.")
            case .audioFramesIn: ("screenrelay_audio_frames_in_total", "Audio frames received from publishers.")
            case .audioFramesOut: ("screenrelay_audio_frames_out_total", "Audio frames written to subscribers.")
            case .audioFramesDropped:
                ("screenrelay_audio_frames_dropped_total", "Audio frames not sent to a subscriber that was too far behind.")
            case .keyframeRequests: ("screenrelay_keyframe_requests_total", "Keyframe requests sent to publishers.")
            case .protocolErrors: ("screenrelay_protocol_errors_total", "Connections closed for malformed or unexpected messages.")
            case .rejectedTokens: ("screenrelay_rejected_tokens_total", "Hello messages refused for their token.")
            case .signals: ("screenrelay_signals_total", "Signals sent by clients or the HTTP API (valid or not).")
            case .overflowCloses:
                (
                    "screenrelay_connections_closed_unread_total",
                    "Connections closed because they let their queue overflow (they do not read): its control messages, its bytes, or their share of the relay's."
                )
            case .framesThinned:
                (
                    "screenrelay_frames_thinned_total",
                    "Video frames of a higher temporal layer not sent to a subscriber whose link could not carry them (it got the lower layers)."
                )
            case .framesFittedIn:
                (
                    "screenrelay_frames_fitted_in_total",
                    "Video frames above a thinned subscriber's temporal layers sent to it all the same, because its link had room for them before the next layer-0 frame."
                )
            case .subscribersEvicted:
                ("screenrelay_subscribers_evicted_total", "Subscribers closed because they took none of their queued media for the stall limit.")
            case .renditionsStarted:
                ("screenrelay_renditions_asked_total", "Second renditions asked of publishers, for subscribers that decode none of what is sent.")
            case .renditionsStopped:
                ("screenrelay_renditions_stopped_total", "Second renditions stopped because no subscriber had needed them for the linger (10 s).")
            case .queuedBytes:
                (
                    "screenrelay_queued_bytes",
                    "Bytes queued to all connections, as their budgets count them (a frame queued for many subscribers counts once for each)."
                )
            }
        }

        var isGauge: Bool { self == .sessions || self == .connections || self == .streams || self == .queuedBytes }
    }

    /// What each limit refused (`screenrelay_refused_total{limit="…"}`): every limit's series is shown, from 0.
    static let refusals = (
        name: "screenrelay_refused_total", label: "limit",
        help: "What each limit refused: connections, requests, messages, sessions, streams."
    )

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

        /// Gauges of things that are gone (a stream ended: its value back to 0) leave the exposition.
        var isGauge: Bool { self != .keyframeRequestsByCause }
    }
}
