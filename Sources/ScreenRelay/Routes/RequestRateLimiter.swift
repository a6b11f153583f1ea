import Dispatch
import Hummingbird
import Synchronization

/// Rates for the HTTP API's calls that make the relay do work a client controls: markers posted into a session's
/// HLS timeline and archive starts and stops. Each kind has a rate and a burst per session
/// (``TokenBucket``); a call past them is answered 429 with the seconds to wait, and counted.
final class RequestRateLimiter: Sendable {
    enum Kind: Sendable, Hashable {
        /// `POST /session/{id}/marker`: 5 a second, 20 at once.
        case marker
        /// `POST /archive` and `POST /archive/{id}/stop`: one every 2 s, 4 at once.
        case archive

        var rate: Double { self == .marker ? 5 : 0.5 }
        var burst: Double { self == .marker ? 20 : 4 }
        var limit: RelayLimit { self == .marker ? .markerRate : .archiveRate }
        /// What a refused caller is told.
        var refusal: String {
            self == .marker
                ? "too many markers for this session: at most 5 a second (20 at once); try again shortly"
                : "too many archive starts and stops for this session: at most one every 2 s (4 at once); try again shortly"
        }
    }

    /// Buckets kept at once; past it, the full ones (sessions that have rested) are forgotten first.
    static let maximumTracked = 10_000
    private let buckets = Mutex<[Key: TokenBucket]>([:])

    private struct Key: Hashable {
        let kind: Kind
        let session: String
    }

    /// Whether a call of `kind` for `session` may go now; spends one if so.
    func allow(_ kind: Kind, session: String, now: Double = RequestRateLimiter.now()) -> Bool {
        buckets.withLock { buckets in
            let key = Key(kind: kind, session: session)
            if buckets[key] == nil, buckets.count >= Self.maximumTracked {
                buckets = buckets.filter { !$0.value.isFull(now: now) }
                if buckets.count >= Self.maximumTracked { buckets.removeAll(keepingCapacity: true) }
            }
            var bucket = buckets[key] ?? TokenBucket(rate: kind.rate, burst: kind.burst)
            defer { buckets[key] = bucket }
            return bucket.take(now: now)
        }
    }

    /// Spends one of `session`'s calls of `kind`, or refuses the request with 429 and says how long to wait.
    func spend(_ kind: Kind, session: String, metrics: RelayMetrics) throws {
        guard allow(kind, session: session) else {
            metrics.refused(kind.limit)
            throw HTTPError(.tooManyRequests, headers: [.retryAfter: String(Int((1 / kind.rate).rounded(.up)))], message: kind.refusal)
        }
    }

    static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
}
