import Foundation
import ScreenMedia
import Testing

@testable import ScreenRelay

/// The bookkeeping of LL-HLS requests that wait for a part: one client's share under the session's total, a
/// place given back as soon as its wait is cancelled (its client went away), counts that never go below zero
/// however many tasks wait, leave and are answered at once, and refusals said once an interval.
@Suite(.timeLimit(.minutes(2))) struct HLSWaitingRequestsTests {
    typealias Client = HLSWaitingRequests.Client

    static let notOut: @Sendable (HLSSnapshot.Position) -> Bool = { _ in false }
    static let far = HLSSnapshot.Position(segment: 100, part: 0)

    /// Waits (polling, up to 20 s) until `condition` holds; whether it did.
    static func eventually(_ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(20)
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    static func waiter(
        _ waiting: HLSWaitingRequests, _ client: Client, clientLimit: Int = 2, position: HLSSnapshot.Position = far
    ) -> Task<HLSWaitingRequests.Outcome, Never> {
        Task { await waiting.wait(for: position, client: client, clientLimit: clientLimit, timeout: .seconds(60), isOut: notOut) }
    }

    @Test func aClientHasItsShareWithinItsTokensHalfAndTheSessionsTotal() async throws {
        let waiting = HLSWaitingRequests(limit: 6)
        #expect(waiting.tokenLimit == 3)
        let attacker = Client(token: "viewer", address: "192.0.2.1")
        let sameLinkElsewhere = Client(token: "viewer", address: "192.0.2.2")
        let otherToken = Client(token: "other", address: "192.0.2.1")
        let third = Client(token: "third", address: "192.0.2.9")
        @Sendable func refused(_ client: Client) async -> HLSWaitingRequests.Outcome {
            await waiting.wait(for: Self.far, client: client, clientLimit: 2, timeout: .seconds(60), isOut: Self.notOut)
        }
        let held = [Self.waiter(waiting, attacker), Self.waiter(waiting, attacker)]
        #expect(await Self.eventually { waiting.count(of: attacker) == 2 })
        // One more of the same client is refused at once; the same token from another address is another client, but
        // the token's clients together hold at most half the session's places.
        #expect(await refused(attacker) == .tooManyFromClient)
        let elsewhere = Self.waiter(waiting, sameLinkElsewhere)
        #expect(await Self.eventually { waiting.count == 3 })
        #expect(await refused(sameLinkElsewhere) == .tooManyFromToken)
        // Another token, from the same address, has its own share.
        let others = [Self.waiter(waiting, otherToken), Self.waiter(waiting, otherToken), Self.waiter(waiting, third)]
        #expect(await Self.eventually { waiting.count == 6 })
        #expect(waiting.count(of: sameLinkElsewhere) == 1 && waiting.count(of: otherToken) == 2 && waiting.clients == 4)
        // The session is full: a client within its share is refused for the total.
        #expect(await refused(Client(token: "fourth", address: "192.0.2.10")) == .tooMany)
        // A part that is out is answered at once, taking no place.
        #expect(await waiting.wait(for: Self.far, client: attacker, clientLimit: 2, timeout: .seconds(60)) { _ in true } == .ready)
        waiting.stop()
        for task in held + [elsewhere] + others { #expect(await task.value == .stopped) }
        #expect(waiting.count == 0 && waiting.clients == 0)
    }

    @Test func aCancelledWaitGivesItsPlaceBackAtOnce() async throws {
        let waiting = HLSWaitingRequests(limit: 1)
        let client = Client(token: "t", address: "a")
        let first = Self.waiter(waiting, client, clientLimit: 1)
        #expect(await Self.eventually { waiting.count == 1 })
        #expect(await waiting.wait(for: Self.far, client: Client(token: "u", address: "b"), timeout: .seconds(60), isOut: Self.notOut) == .tooMany)
        first.cancel()
        #expect(await first.value == .gone)
        #expect(waiting.count == 0 && waiting.count(of: client) == 0 && waiting.clients == 0)
        // Its place is free for the next, of this client or another; a task cancelled before it waits takes none.
        let next = Self.waiter(waiting, client, clientLimit: 1)
        #expect(await Self.eventually { waiting.count == 1 })
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await waiting.wait(for: Self.far, client: client, clientLimit: 5, timeout: .seconds(60), isOut: Self.notOut)
        }
        #expect(await early.value == .gone)
        #expect(waiting.count == 1)
        next.cancel()
        #expect(await next.value == .gone)
        #expect(waiting.count == 0 && waiting.clients == 0)
    }

    /// Many tasks of a few clients wait, are cancelled, answered, expired and refused at once, from many threads:
    /// each ends exactly once, no client ever holds more than its share, and every count is back to zero.
    @Test func countsStayWithinTheSharesAndNeverBelowZeroUnderConcurrency() async throws {
        let waiting = HLSWaitingRequests(limit: 40)
        let clients = (0..<12).map { Client(token: "t\($0 % 3)", address: "a\($0 / 3)") }
        let current = Locked(HLSSnapshot())
        let isOut: @Sendable (HLSSnapshot.Position) -> Bool = { position in current.withLock { $0.holds(position) } }
        let overShare = Locked(0)
        let sampling = Task {
            while !Task.isCancelled {
                if clients.contains(where: { waiting.count(of: $0) > 4 }) || waiting.count > 40 { overShare.withLock { $0 += 1 } }
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
        let outcomes = await withTaskGroup(of: HLSWaitingRequests.Outcome.self) { group in
            for index in 0..<2000 {
                let client = clients[index % clients.count]
                let position = HLSSnapshot.Position(segment: 1 + index % 3, part: nil)
                let waiter = Task {
                    await waiting.wait(for: position, client: client, clientLimit: 4, timeout: .milliseconds(index % 7 == 0 ? 1 : 30_000), isOut: isOut)
                }
                group.addTask {
                    if index % 2 == 0 {
                        try? await Task.sleep(for: .microseconds(index % 500))
                        waiter.cancel()
                    }
                    return await waiter.value
                }
                if index % 50 == 0 { waiting.expire(now: .now) }
                if index % 400 == 399 {
                    // A segment comes out: those waiting for it go on.
                    current.withLock { $0.segments.append(HLSPlaylistTests.segment(1 + index / 400 % 3, start: Int64(index))) }
                    waiting.published(current.withLock { $0 })
                    current.withLock { $0.segments = [] }
                }
            }
            // Whatever still waits ends when HLS stops.
            try? await Task.sleep(for: .milliseconds(100))
            waiting.stop()
            var all: [HLSWaitingRequests.Outcome] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        sampling.cancel()
        #expect(outcomes.count == 2000)
        // Which cancellations land while their request waits is up to the scheduler (aCancelledWaitGivesItsPlaceBackAtOnce
        // checks that path on its own); the shares must have been met, and every count must come back to zero.
        #expect(outcomes.contains(.tooManyFromClient), "\(Dictionary(grouping: outcomes, by: { $0 }).mapValues(\.count))")
        #expect(overShare.value == 0, "a client held more than its share, or the session more than its total")
        #expect(waiting.count == 0 && waiting.clients == 0 && clients.allSatisfy { waiting.count(of: $0) == 0 })
    }

    @Test func refusalsAreSaidOnceAnInterval() {
        let waiting = HLSWaitingRequests(limit: 1)
        let start = ContinuousClock.now
        #expect(waiting.refusalToLog(now: start, interval: .seconds(60)) == 1, "the first at once")
        for second in 1...59 { #expect(waiting.refusalToLog(now: start + .seconds(second), interval: .seconds(60)) == nil) }
        #expect(waiting.refusalToLog(now: start + .seconds(60), interval: .seconds(60)) == 60, "then how many since")
        #expect(waiting.refusalToLog(now: start + .seconds(61), interval: .seconds(60)) == nil)
    }
}
