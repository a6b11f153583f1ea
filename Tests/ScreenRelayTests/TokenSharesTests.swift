import Foundation
import ScreenMedia
import ScreenWire
import Testing

@testable import ScreenRelay

/// One token's connections share what one token may do: however many connections it opens, it cannot take a
/// session's streams, chat, frame rate, seats or subscriptions from the others; a viewer link handed to an audience
/// has a cap of its own, sized for an audience.
@Suite struct TokenSharesTests {
    typealias Router = StreamRouter<String>
    static let properties = StreamProperties(codec: .vp9, width: 64, height: 48, estimatedFramesPerSecond: 5, estimatedCaptureDelayMilliseconds: 0)

    static func welcomed(_ actions: [Router.Action]) -> Bool {
        if case .sendControl(.welcome, _)? = actions.first { true } else { false }
    }

    @Test func aPublisherTokensConnectionsAreCappedAndAViewerLinkIsNot() {
        var router = Router(sessionId: "s")
        let publishers = (0..<10).map { router.connect(ConnectionInfo(connectionId: "p\($0)", role: .publisher, data: ""), token: "publisher") }
        #expect(publishers.map(Self.welcomed) == Array(repeating: true, count: 8) + [false, false])
        guard case .close("p8", .full, let sentence)? = publishers[8].first else {
            Issue.record("\(publishers[8])")
            return
        }
        #expect(sentence.contains("8 connections"), "\(sentence)")
        #expect(router.counters.refused[.connectionsPerToken] == 2)
        // One leaves: the token may connect again.
        _ = router.disconnect("p0")
        #expect(Self.welcomed(router.connect(ConnectionInfo(connectionId: "p10", role: .publisher, data: ""), token: "publisher")))
        // A viewer link: 500 people watch with it, joining 20 a second; the 501st is refused, to try again later.
        let viewers = (0..<501).map {
            router.connect(ConnectionInfo(connectionId: "v\($0)", role: .subscriber, data: ""), token: "link", now: Double($0) / 20)
        }
        #expect(viewers.dropLast().allSatisfy(Self.welcomed))
        guard case .close("v500", .full, let refusal)? = viewers.last?.first else {
            Issue.record("\(viewers.last ?? [])")
            return
        }
        #expect(refusal.contains("500 connections"), "\(refusal)")
    }

    @Test func viewersCannotTakeTheSeatsKeptForPresentersAndModerators() {
        var limits = Router.Limits()
        limits.tokenShares.connectionsPerSession = 20
        limits.tokenShares.reservedSeats = 5
        var router = Router(sessionId: "s", limits: limits)
        let joined = (0..<25).map { router.connect(ConnectionInfo(connectionId: "v\($0)", role: .subscriber, data: ""), token: "v\($0)") }
        #expect(joined.count(where: Self.welcomed) == 15)
        #expect(router.counters.refused[.connectionsPerSession] == 10)
        guard case .close("v15", .full, let sentence)? = joined[15].first else {
            Issue.record("\(joined[15])")
            return
        }
        #expect(sentence.contains("15 viewers"), "\(sentence)")
        // The presenter (reconnecting) and a moderator still get in, up to the session's 20.
        let kept = (0..<6).map { router.connect(ConnectionInfo(connectionId: "m\($0)", role: $0 == 0 ? .publisher : .moderator, data: ""), token: "m\($0)") }
        #expect(kept.map(Self.welcomed) == Array(repeating: true, count: 5) + [false])
        #expect(router.connectionInfos.count == 20)
    }

    @Test func oneTokensConnectionsJoinAtARateAndChurningThemBuysNoMore() {
        var router = Router(sessionId: "s")
        // A burst of 100 at once, then 20 a second; leaving gives nothing back.
        var welcomed = 0
        for index in 0..<300 {
            let actions = router.connect(ConnectionInfo(connectionId: "c\(index)", role: .subscriber, data: ""), token: "link", now: 1)
            if Self.welcomed(actions) { welcomed += 1 }
            _ = router.disconnect("c\(index)")
        }
        #expect(welcomed == 100)
        #expect(router.counters.refused[.joinRate] == 200)
        // A second later, 20 more.
        let later = (0..<30).map { router.connect(ConnectionInfo(connectionId: "d\($0)", role: .subscriber, data: ""), token: "link", now: 2) }
        #expect(later.count(where: Self.welcomed) == 20)
        // Another token is not held back.
        #expect(Self.welcomed(router.connect(ConnectionInfo(connectionId: "other", role: .subscriber, data: ""), token: "other", now: 2)))
    }

    @Test func subscriptionAndStreamChurnIsRefusedPastItsAllowanceWithoutReachingTheOthers() {
        var router = Router(sessionId: "s")
        _ = router.connect(ConnectionInfo(connectionId: "p", role: .publisher, data: ""), token: "publisher")
        _ = router.handle(.publish(name: "screen", properties: Self.properties), from: "p", now: 0)
        for index in 0..<20 { _ = router.connect(ConnectionInfo(connectionId: "v\(index)", role: .subscriber, data: ""), token: "link") }
        // One viewer cycles its subscription 200 times in a second: 10 subscribes go (10 cycles; an unsubscribe is
        // free); then each subscribe is refused, and the unsubscribe after it has nothing to end.
        var refused = 0
        var ended = 0
        for cycle in 0..<200 {
            let message: ControlMessage = cycle % 2 == 0 ? .subscribe(streamId: 1, catchUp: true) : .unsubscribe(streamId: 1)
            for action in router.handle(message, from: "v0", now: 1) {
                if case .sendControl(.error(.rateLimited, _), "v0") = action { refused += 1 }
                if case .discardQueued("v0", 1) = action { ended += 1 }
            }
        }
        #expect(refused == 90)
        #expect(ended == 10, "every subscription admitted ends at its unsubscribe, the allowance spent or not, and gives back what was queued")
        #expect(router.counters.refused[.subscriptionRate] == 90)
        // The publisher changes its stream's properties 100 times in a second: 10 reach each member.
        var announced = 0
        for _ in 0..<100 {
            announced += router.handle(.streamPropertyChanged(streamId: 1, properties: Self.properties), from: "p", now: 1).count {
                if case .sendControl(.streamPropertyChanged, "v1") = $0 { true } else { false }
            }
        }
        #expect(announced == 10)
        #expect(router.counters.refused[.streamChangeRate] == 90)
    }

    @Test func oneTokenCannotTakeASessionsStreams() {
        var router = Router(sessionId: "s")
        for index in 0..<4 { _ = router.connect(ConnectionInfo(connectionId: "a\(index)", role: .publisher, data: ""), token: "a") }
        var refusals: [String] = []
        for index in 0..<4 {
            for _ in 0..<4 {
                for case .sendControl(.error(_, let message), _) in router.handle(.publish(name: "x", properties: Self.properties), from: "a\(index)", now: 0) {
                    refusals.append(message)
                }
            }
        }
        #expect(router.streamCount == 8)
        #expect(refusals.count == 8 && refusals.allSatisfy { $0.contains("this token's connections publish 8 streams") }, "\(refusals)")
        // Another token still publishes.
        _ = router.connect(ConnectionInfo(connectionId: "b", role: .publisher, data: ""), token: "b")
        _ = router.handle(.publish(name: "screen", properties: Self.properties), from: "b", now: 0)
        #expect(router.streamCount == 9)
    }

    /// A token flooding chat from ten connections: everyone else's chat still goes through.
    @Test func oneTokensChatIsOneConnectionsWorth() {
        var router = Router(sessionId: "s")
        for index in 0..<10 { _ = router.connect(ConnectionInfo(connectionId: "flood\(index)", role: .subscriber, data: ""), token: "flood") }
        _ = router.connect(ConnectionInfo(connectionId: "honest", role: .subscriber, data: ""), token: "honest")
        var floodSent = 0
        var honestDelivered = 0
        for tenth in 0..<50 {
            let now = Double(tenth) / 10
            for index in 0..<10 {
                for _ in 0..<10 {
                    floodSent += router.handle(.signal(Signal(type: "chat", data: "x")), from: "flood\(index)", now: now).contains {
                        if case .sendControl(.signal, "honest") = $0 { true } else { false }
                    } ? 1 : 0
                }
            }
            honestDelivered += router.handle(.signal(Signal(type: "chat", data: "hi")), from: "honest", now: now).contains {
                if case .sendControl(.signal, "flood0") = $0 { true } else { false }
            } ? 1 : 0
        }
        // 5 s: the flood's 40 at once and 20 a second (not 10 connections × 40 + 20 a second each); the honest
        // viewer's 50 all delivered.
        #expect(floodSent <= 40 + 5 * 20 + 1, "\(floodSent)")
        #expect(honestDelivered == 50)
    }

    @Test func aTokensStreamsShareAFrameRate() {
        var shares = TokenShares(limits: .init())
        let joined = [shares.join("a", token: "t", role: .publisher), shares.join("b", token: "t", role: .publisher)]
        #expect(joined == [nil, nil])
        // Two connections of one token, at the same instant: the token's burst (twice 480), not each one's.
        var admitted = 0
        for index in 0..<2000 where shares.takeFrame(index % 2 == 0 ? "a" : "b", kind: .video, now: 0) { admitted += 1 }
        #expect(admitted == 960)
        var audio = 0
        for _ in 0..<1000 where shares.takeFrame("a", kind: .audio, now: 0) { audio += 1 }
        #expect(audio == 800)
        // The last connection leaves: its allowances go with it, and a new connection of it starts afresh.
        shares.leave("a")
        shares.leave("b")
        let again = shares.join("c", token: "t", role: .publisher)
        #expect(again == nil)
        let afresh = shares.takeFrame("c", kind: .video, now: 0)
        #expect(afresh)
    }
}
