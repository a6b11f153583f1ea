import Synchronization

/// Players' requests that wait for a part or segment not out yet — an LL-HLS blocking playlist reload
/// (`_HLS_msn`, `_HLS_part`) or a part named by `EXT-X-PRELOAD-HINT` — each resumed when the packager publishes
/// what it waits for, at its deadline (the packager's timer calls ``expire(now:)``), when HLS stops, or when its
/// task is cancelled (the route cancels it when the client closes its connection: ``ClientGoneWatch/whileConnected(_:_:)``).
///
/// At most ``limit`` wait at once in a session (each holds a connection), and at most the caller's `clientLimit`
/// of one ``Client`` (a token from one address): one more is turned away at once, so neither a crowd of players
/// nor one client's flood can hold more than a bounded number, and one client cannot take the others' places.
final class HLSWaitingRequests: Sendable {
    enum Outcome: Sendable, Equatable {
        case ready
        case timedOut
        /// The session's ``limit`` wait already.
        case tooMany
        /// This client's own share waits already.
        case tooManyFromClient
        /// Its token's share (its clients together, from however many addresses) waits already.
        case tooManyFromToken
        case stopped
        /// The wait was cancelled (its client went away): its place is free again.
        case gone
    }

    /// Who waits, for the per-client share: the token it showed and the address it connects from.
    struct Client: Hashable, Sendable {
        var token: String
        var address: String

        /// A caller that is not told apart from the others (the session's total bounds it).
        static let anyone = Client(token: "", address: "")
    }

    private struct Waiter {
        let client: Client
        let position: HLSSnapshot.Position
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<Outcome, Never>
    }

    private struct State {
        var waiters: [UInt64: Waiter] = [:]
        var byClient: [Client: Int] = [:]
        /// By token alone, whatever the address: one viewer link from many addresses (a botnet, an IPv6 prefix) holds
        /// at most half of the session's places (``tokenLimit``).
        var byToken: [String: Int] = [:]
        var nextId: UInt64 = 0
        var stopped = false
        /// Waits ended by their task's cancellation, their places given back (``gone``).
        var gone = 0
        /// Refusals since the last one said in the log, and when that was (``refusalToLog(now:interval:)``).
        var refusedUnsaid = 0
        var lastSaid: ContinuousClock.Instant?

        mutating func add(_ waiter: Waiter) -> UInt64 {
            nextId &+= 1
            waiters[nextId] = waiter
            byClient[waiter.client, default: 0] += 1
            byToken[waiter.client.token, default: 0] += 1
            return nextId
        }

        mutating func remove(_ id: UInt64) -> Waiter? {
            guard let waiter = waiters.removeValue(forKey: id) else { return nil }
            let left = byClient[waiter.client, default: 0] - 1
            // Never below zero: a client with none waiting is not listed.
            byClient[waiter.client] = left > 0 ? left : nil
            let tokenLeft = byToken[waiter.client.token, default: 0] - 1
            byToken[waiter.client.token] = tokenLeft > 0 ? tokenLeft : nil
            return waiter
        }
    }

    let limit: Int
    private let state = Mutex(State())

    init(limit: Int) { self.limit = max(0, limit) }

    /// The places one token's clients may hold together, from however many addresses: half the session's.
    var tokenLimit: Int { max(1, limit / 2) }

    var count: Int { state.withLock { $0.waiters.count } }

    /// How many of `client`'s requests wait now.
    func count(of client: Client) -> Int { state.withLock { $0.byClient[client] ?? 0 } }

    /// Clients with at least one request waiting.
    var clients: Int { state.withLock { $0.byClient.count } }

    /// Waits that ended because their task was cancelled (their client went away), since this began.
    var gone: Int { state.withLock { $0.gone } }

    /// Waits until `isOut(position)` holds (checked now, and again whenever ``published(_:)`` is called), for at
    /// most `timeout`, unless the session's ``limit`` or `client`'s `clientLimit` already wait (then at once). A
    /// cancelled task's wait ends at once with ``Outcome/gone``, its place given back.
    func wait(
        for position: HLSSnapshot.Position, client: Client = .anyone, clientLimit: Int = .max, timeout: Duration,
        isOut: (HLSSnapshot.Position) -> Bool
    ) async -> Outcome {
        // Set under the lock once the waiter is listed, so that a cancellation removes exactly that one.
        let id = Mutex<UInt64?>(nil)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let immediate: Outcome? = state.withLock { state in
                    if state.stopped { return .stopped }
                    // Checked under this lock: a part published meanwhile resumes the waiter after it is added.
                    if isOut(position) { return .ready }
                    // A cancellation before this point finds no waiter to remove: it is seen here instead.
                    if Task.isCancelled { return .gone }
                    if state.byClient[client, default: 0] >= max(1, clientLimit) { return .tooManyFromClient }
                    if client != .anyone, state.byToken[client.token, default: 0] >= tokenLimit { return .tooManyFromToken }
                    if state.waiters.count >= limit { return .tooMany }
                    let added = state.add(Waiter(client: client, position: position, deadline: .now + timeout, continuation: continuation))
                    id.withLock { $0 = added }
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let gone = state.withLock { state -> Waiter? in
                let removed = id.withLock { $0 }.flatMap { state.remove($0) }
                if removed != nil { state.gone += 1 }
                return removed
            }
            gone?.continuation.resume(returning: .gone)
        }
    }

    /// Ends the waits whose deadline has passed.
    func expire(now: ContinuousClock.Instant) {
        for waiter in remove(where: { $0.deadline <= now }) { waiter.continuation.resume(returning: .timedOut) }
    }

    /// What the snapshot now holds: the waiters it satisfies go on.
    func published(_ snapshot: HLSSnapshot) {
        for waiter in remove(where: { snapshot.holds($0.position) }) { waiter.continuation.resume(returning: .ready) }
    }

    private func remove(where matches: (Waiter) -> Bool) -> [Waiter] {
        state.withLock { state in
            let ids = state.waiters.compactMap { matches($0.value) ? $0.key : nil }
            return ids.compactMap { state.remove($0) }
        }
    }

    /// HLS stops: every waiter goes on, and later ones are answered at once.
    func stop() {
        let all = state.withLock { state -> [Waiter] in
            state.stopped = true
            defer {
                state.waiters = [:]
                state.byClient = [:]
                state.byToken = [:]
            }
            return Array(state.waiters.values)
        }
        for waiter in all { waiter.continuation.resume(returning: .stopped) }
    }

    /// Counts one refusal (``Outcome/tooMany``, ``Outcome/tooManyFromClient``); the number refused since the last
    /// time this returned one, when `interval` has passed since then (the first one at once): the log says a flood
    /// of refusals once an interval, not once a request.
    func refusalToLog(now: ContinuousClock.Instant = .now, interval: Duration = .seconds(60)) -> Int? {
        state.withLock { state in
            state.refusedUnsaid += 1
            guard state.lastSaid.map({ now - $0 >= interval }) ?? true else { return nil }
            state.lastSaid = now
            defer { state.refusedUnsaid = 0 }
            return state.refusedUnsaid
        }
    }
}
