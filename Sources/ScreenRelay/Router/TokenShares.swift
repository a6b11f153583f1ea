import ScreenWire

/// What the connections of one token may do together in a session, and how many connections the session holds:
/// the shares that keep one token (handed to many people, leaked, or scripted onto many connections) from taking
/// a session's streams, chat or frame rate from everyone else's. Pure: the caller passes the time.
public struct TokenShares: Sendable {
    public struct Limits: Sendable, Equatable {
        /// Connections one publisher or moderator token may hold in a session at once (screenpub holds one, two
        /// while a reconnection overlaps a connection the relay has not yet seen die). Viewer tokens are links
        /// handed to an audience: their connections are bounded by the session's and each address's caps.
        public var connectionsPerToken = 8
        /// Connections a session holds at once, all roles together.
        public var connectionsPerSession = 2_000
        /// Streams the connections of one token publish at once: a quarter of a session's 32, so that one token
        /// cannot keep the others from publishing.
        public var streamsPerToken = 8
        /// Signals the connections of one token send per second together (twice as many at once): as many as one
        /// connection may, so that opening more connections buys no more chat.
        public var signalsPerSecond = 20.0
        /// Video and audio frames the streams of one token send per second together (twice as many at once): two
        /// streams at the most one may send.
        public var videoFramesPerSecond = 480.0
        public var audioFramesPerSecond = 400.0

        public init() {}
    }

    enum Refusal: Equatable {
        case connectionsPerToken(Int), connectionsPerSession(Int)

        var sentence: String {
            switch self {
            case .connectionsPerToken(let limit): "this token already has \(limit) connections in the session, the most one may: close one first"
            case .connectionsPerSession(let limit): "this session holds \(limit) connections, the most it may"
            }
        }
    }

    let limits: Limits
    private var tokenOf: [String: String] = [:]
    private var connectionCounts: [String: Int] = [:]
    private var signals: [String: TokenBucket] = [:]
    private var videoFrames: [String: TokenBucket] = [:]
    private var audioFrames: [String: TokenBucket] = [:]

    init(limits: Limits) { self.limits = limits }

    func token(of connectionId: String) -> String? { tokenOf[connectionId] }

    /// A connection of `token` joins: nil when it may, else why not (then it is not counted).
    mutating func join(_ connectionId: String, token: String, role: Role) -> Refusal? {
        guard tokenOf.count < limits.connectionsPerSession else { return .connectionsPerSession(limits.connectionsPerSession) }
        let count = connectionCounts[token, default: 0]
        if role != .subscriber, count >= limits.connectionsPerToken { return .connectionsPerToken(limits.connectionsPerToken) }
        tokenOf[connectionId] = token
        connectionCounts[token] = count + 1
        return nil
    }

    /// A connection left; its token's allowances go with its last connection.
    mutating func leave(_ connectionId: String) {
        guard let token = tokenOf.removeValue(forKey: connectionId) else { return }
        let count = connectionCounts[token, default: 1] - 1
        if count > 0 {
            connectionCounts[token] = count
        } else {
            connectionCounts[token] = nil
            signals[token] = nil
            videoFrames[token] = nil
            audioFrames[token] = nil
        }
    }

    /// Spends one of the token's signals; false when they are spent.
    mutating func takeSignal(_ connectionId: String, now: Double) -> Bool {
        Self.take(from: &signals, token: tokenOf[connectionId], rate: limits.signalsPerSecond, now: now)
    }

    /// Spends one of the token's frames of `kind`; false when they are spent.
    mutating func takeFrame(_ connectionId: String, kind: CaptureTimeline.Kind, now: Double) -> Bool {
        kind == .video
            ? Self.take(from: &videoFrames, token: tokenOf[connectionId], rate: limits.videoFramesPerSecond, now: now)
            : Self.take(from: &audioFrames, token: tokenOf[connectionId], rate: limits.audioFramesPerSecond, now: now)
    }

    private static func take(from buckets: inout [String: TokenBucket], token: String?, rate: Double, now: Double) -> Bool {
        guard let token else { return true }
        var bucket = buckets[token] ?? TokenBucket(rate: rate, burst: 2 * rate)
        defer { buckets[token] = bucket }
        return bucket.take(now: now)
    }
}
