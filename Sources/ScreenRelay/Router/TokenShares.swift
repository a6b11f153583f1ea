import ScreenWire

/// What the connections of one token may do together in a session, and how many connections the session holds:
/// the shares that keep one token (handed to many people, leaked, or scripted onto many connections) from taking
/// a session's streams, chat or frame rate from everyone else's. Pure: the caller passes the time.
public struct TokenShares: Sendable {
    public struct Limits: Sendable, Equatable {
        /// Connections one publisher or moderator token may hold in a session at once (screenpub holds one, two
        /// while a reconnection overlaps a connection the relay has not yet seen die).
        public var connectionsPerToken = 8
        /// Connections one viewer token may hold in a session at once. A viewer token is a link handed to an
        /// audience and may be shared, so this is sized for one: the people it is handed to (each viewer page holds
        /// one connection), with room for reconnections (two at once, briefly). 500 by default: a link shared with
        /// a large audience needs more (`--max-viewer-connections-per-token`), or a token of its own per group.
        public var viewerConnectionsPerToken = 500
        /// Connections a session holds at once, all roles together.
        public var connectionsPerSession = 2_000
        /// Of ``connectionsPerSession``, those that only publisher and moderator tokens may take: however many
        /// viewers come, the presenter can always reconnect and a moderator join.
        public var reservedSeats = 32
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
        case connectionsPerToken(Int), connectionsPerSession(Int), viewerSeats(Int)

        var sentence: String {
            switch self {
            case .connectionsPerToken(let limit):
                "this token already has \(limit) connections in the session, the most one may; try again once one has closed"
            case .connectionsPerSession(let limit): "this session holds \(limit) connections, the most it may; try again later"
            case .viewerSeats(let limit):
                "this session holds \(limit) viewers, the most it lets in (its other seats are kept for its presenters and moderators); try again later"
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
        let count = connectionCounts[token, default: 0]
        if role == .subscriber {
            let seats = max(0, limits.connectionsPerSession - limits.reservedSeats)
            guard tokenOf.count < seats else { return .viewerSeats(seats) }
            guard count < limits.viewerConnectionsPerToken else { return .connectionsPerToken(limits.viewerConnectionsPerToken) }
        } else {
            guard tokenOf.count < limits.connectionsPerSession else { return .connectionsPerSession(limits.connectionsPerSession) }
            guard count < limits.connectionsPerToken else { return .connectionsPerToken(limits.connectionsPerToken) }
        }
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
