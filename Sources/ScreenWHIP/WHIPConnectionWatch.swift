/// The watch over one WHIP session's WebRTC connection, as a pure state machine in the shape of the relay's
/// `RelayConnection`: it is told what webrtcbin says (the peer connection's state, the time since the SFU's last
/// RTCP) and when, and answers what to do. No clock, no C session: ``WHIPPublisher`` carries the actions out, and
/// tests drive it with made-up times (seconds of a monotonic clock).
///
/// States: connecting (until a deadline), connected (until the connection drops or the SFU falls silent), lost.
struct WHIPConnectionWatch: Sendable {
    /// The peer connection's state, as webrtcbin reports it.
    enum PeerState: Sendable, Equatable {
        case new, connecting, connected, disconnected, closed
        /// ICE or DTLS failed, or the pipeline reported an error (its text; empty when it gave none).
        case failed(detail: String)
    }

    enum State: Sendable, Equatable {
        case connecting(deadline: Double)
        /// Connected at `since`; `heardRTCP` once the SFU's first receiver report arrived.
        case connected(since: Double, heardRTCP: Bool)
        case lost
    }

    enum Action: Sendable, Equatable {
        /// It connected just now: show it connected, and ask for a keyframe (receivers start from one).
        case connected
        /// The SFU's first RTCP arrived: from now on its silence counts from its last report.
        case heardFirstReport
        /// Read the receiver's latest report (loss, round trip) for the uplink controller.
        case followReceiverReports
        /// Look again after this many seconds at the latest (a state change wakes the publisher sooner).
        case wait(seconds: Double)
        /// The connection failed or is lost, in words for the user: end the session.
        case lose(String)
    }

    /// Seconds without RTCP from the SFU (it sends receiver reports about every second) after which the session
    /// counts as lost.
    static let defaultRTCPSilenceLimit = 10.0
    /// How long after a deadline the watch looks again, so that it looks past it.
    static let lookPast = 0.05
    /// The longest wait while connected: receiver reports are followed about once a second.
    static let reportInterval = 1.0

    private(set) var state: State
    let endpoint: String
    /// Seconds a new session has to reach "connected" before it counts as failed.
    let connectTimeout: Double
    let rtcpSilenceLimit: Double

    init(endpoint: String, now: Double, connectTimeout: Double, rtcpSilenceLimit: Double = Self.defaultRTCPSilenceLimit) {
        self.endpoint = endpoint
        self.connectTimeout = connectTimeout
        self.rtcpSilenceLimit = rtcpSilenceLimit
        state = .connecting(deadline: now + connectTimeout)
    }

    /// webrtcbin says `peer`, and the SFU's last RTCP came `secondsSinceRTCP` ago (nil: none yet), at `now`.
    mutating func observe(_ peer: PeerState, secondsSinceRTCP: Double?, now: Double) -> [Action] {
        if case .failed(let detail) = peer, state != .lost {
            return lose("the WebRTC connection to \(endpoint) failed\(detail.isEmpty ? "" : ": \(detail)") (ICE or DTLS)")
        }
        switch state {
        case .lost:
            return []
        case .connecting(let deadline):
            if peer == .connected {
                state = .connected(since: now, heardRTCP: false)
                return [.connected] + watchConnected(peer, secondsSinceRTCP: secondsSinceRTCP, now: now)
            }
            guard now <= deadline else {
                return lose("no WebRTC connection to \(endpoint) within \(Int(connectTimeout)) s (the SFU's candidates cannot be reached)")
            }
            return [.wait(seconds: deadline - now + Self.lookPast)]
        case .connected:
            return watchConnected(peer, secondsSinceRTCP: secondsSinceRTCP, now: now)
        }
    }

    /// Connected: lost when it drops, or when the SFU has been silent too long. An SFU that went away without a
    /// word (killed, unplugged) stops its receiver reports long before ICE notices. A WebRTC receiver must report
    /// (RFC 3550, RFC 8888): none at all counts from the moment of connecting.
    private mutating func watchConnected(_ peer: PeerState, secondsSinceRTCP: Double?, now: Double) -> [Action] {
        guard case .connected(let since, let heardRTCP) = state else { return [] }
        if peer == .disconnected || peer == .closed {
            return lose("the WebRTC connection to \(endpoint) was lost")
        }
        var actions: [Action] = []
        if secondsSinceRTCP != nil, !heardRTCP {
            state = .connected(since: since, heardRTCP: true)
            actions.append(.heardFirstReport)
        }
        let silence = secondsSinceRTCP ?? (now - since)
        if silence > rtcpSilenceLimit {
            return lose("\(endpoint) has sent no RTCP for \(Int(silence)) s: the SFU is gone")
        }
        return actions + [.followReceiverReports, .wait(seconds: min(Self.reportInterval, rtcpSilenceLimit - silence + Self.lookPast))]
    }

    private mutating func lose(_ message: String) -> [Action] {
        state = .lost
        return [.lose(message)]
    }
}
