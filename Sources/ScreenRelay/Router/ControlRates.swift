/// How often a client may change what the session does for it or tells everyone: its subscriptions (`subscribe`:
/// each may queue the cached group of pictures for it; an `unsubscribe`, which only gives back, is free), its
/// streams (`publish`, `unpublish`, `streamPropertyChanged`: each is announced to every member) and its joining
/// (`hello`: each join and leave is announced to every member). Each has an allowance per connection and per token
/// (all its connections together, and after they leave: closing and opening connections buys no more), so that one
/// client's churn costs the other members a bounded number of messages. Pure: the router passes the time.
struct ControlRates {
    enum Kind: CaseIterable {
        case subscription, streamChange, join

        var limit: RelayLimit {
            switch self {
            case .subscription: .subscriptionRate
            case .streamChange: .streamChangeRate
            case .join: .joinRate
            }
        }
    }

    /// An allowance: so many a second, so many at once.
    struct Rate: Sendable, Equatable {
        var perSecond: Double
        var burst: Double
    }

    /// The allowances, per connection and per token (``RouterLimits/controlRates``).
    struct Limits: Sendable, Equatable {
        /// A viewer subscribes once a stream it watches; 5 a second lets it switch streams at will.
        var subscriptionsPerConnection = Rate(perSecond: 5, burst: 10)
        /// An audience on one link joins at once: its 500 connections may each subscribe within a few seconds.
        var subscriptionsPerToken = Rate(perSecond: 50, burst: 500)
        /// screenpub changes its stream's properties when it pauses, resizes or changes codec: a few a minute.
        var streamChangesPerConnection = Rate(perSecond: 2, burst: 10)
        var streamChangesPerToken = Rate(perSecond: 4, burst: 20)
        /// Joins of one token's connections (no per-connection allowance: a connection joins once): an audience of
        /// 100 at once, then 20 a second.
        var joinsPerToken = Rate(perSecond: 20, burst: 100)
    }

    let limits: Limits
    private var connections: [Kind: [String: TokenBucket]] = [:]
    private var tokens: [Kind: [String: TokenBucket]] = [:]

    init(limits: Limits) { self.limits = limits }

    /// Spends one of `connectionId`'s (of `token`) allowance of `kind`: nil when it may, else the sentence that
    /// refuses it.
    mutating func admit(_ kind: Kind, connectionId: String, token: String?, now: Double) -> String? {
        let (perConnection, perToken) = rates(kind)
        if let perConnection, !Self.take(&connections[kind, default: [:]], connectionId, perConnection, now: now) {
            return "too many \(kind.noun): at most \(Int(perConnection.perSecond)) a second from one connection; try again in a moment"
        }
        if let token {
            if tokens[kind, default: [:]].count > Self.forgetAbove { forgetRested(kind, now: now) }
            if !Self.take(&tokens[kind, default: [:]], token, perToken, now: now) {
                return "too many \(kind.noun) from this token: at most \(Int(perToken.perSecond)) a second from all its connections together; try again in a moment"
            }
        }
        return nil
    }

    /// The connection left: its own allowances go with it (its token's stay until they have refilled).
    mutating func forget(_ connectionId: String) {
        for kind in Kind.allCases { connections[kind]?[connectionId] = nil }
    }

    /// Tokens' allowances are kept after their connections leave, and forgotten once refilled when there are more
    /// than this many (one an attacker's token list can only grow by tokens the server minted).
    static var forgetAbove: Int { 1024 }

    private mutating func forgetRested(_ kind: Kind, now: Double) {
        tokens[kind] = tokens[kind]?.filter { !$0.value.isFull(now: now) }
    }

    private func rates(_ kind: Kind) -> (perConnection: Rate?, perToken: Rate) {
        switch kind {
        case .subscription: (limits.subscriptionsPerConnection, limits.subscriptionsPerToken)
        case .streamChange: (limits.streamChangesPerConnection, limits.streamChangesPerToken)
        case .join: (nil, limits.joinsPerToken)
        }
    }

    private static func take(_ buckets: inout [String: TokenBucket], _ key: String, _ rate: Rate, now: Double) -> Bool {
        var bucket = buckets[key] ?? TokenBucket(rate: rate.perSecond, burst: rate.burst)
        defer { buckets[key] = bucket }
        return bucket.take(now: now)
    }
}

extension ControlRates.Kind {
    fileprivate var noun: String {
        switch self {
        case .subscription: "subscription changes"
        case .streamChange: "stream changes (publish, unpublish, property changes)"
        case .join: "connections joining"
        }
    }
}
