import Testing

@testable import ScreenWHIP

/// The watch over a WHIP session's WebRTC connection, without webrtcbin or a clock: made-up states, made-up times.
struct WHIPConnectionWatchTests {
    static func watch(now: Double = 100, connectTimeout: Double = 20) -> WHIPConnectionWatch {
        WHIPConnectionWatch(endpoint: "https://sfu/whip", now: now, connectTimeout: connectTimeout)
    }

    /// Whether `actions` are `expected` and then a wait of `seconds` (to a microsecond: the times are sums).
    static func match(_ actions: [WHIPConnectionWatch.Action], _ expected: [WHIPConnectionWatch.Action] = [], wait seconds: Double) -> Bool {
        guard case .wait(let waited)? = actions.last, abs(waited - seconds) < 1e-6 else { return false }
        return Array(actions.dropLast()) == expected
    }

    /// The message of `actions` when they lose the connection.
    static func lost(_ actions: [WHIPConnectionWatch.Action]) -> String? {
        guard actions.count == 1, case .lose(let message) = actions[0] else { return nil }
        return message
    }

    @Test func connectingWaitsUntilItsDeadlineAndFailsPastIt() {
        var watch = Self.watch()
        #expect(Self.match(watch.observe(.new, secondsSinceRTCP: nil, now: 100), wait: 20.05))
        #expect(Self.match(watch.observe(.connecting, secondsSinceRTCP: nil, now: 115), wait: 5.05))
        // A drop before connecting is ICE still trying: only the deadline counts.
        #expect(Self.match(watch.observe(.disconnected, secondsSinceRTCP: nil, now: 120), wait: 0.05))
        let message = Self.lost(watch.observe(.connecting, secondsSinceRTCP: nil, now: 120.01))
        #expect(message == "no WebRTC connection to https://sfu/whip within 20 s (the SFU's candidates cannot be reached)")
        #expect(watch.state == .lost)
        #expect(watch.observe(.connected, secondsSinceRTCP: nil, now: 121).isEmpty, "nothing counts once lost")
    }

    @Test func connectingShowsItOnceAndFollowsTheReceiversReports() {
        var watch = Self.watch()
        #expect(Self.match(watch.observe(.connected, secondsSinceRTCP: nil, now: 103), [.connected, .followReceiverReports], wait: 1))
        #expect(watch.state == .connected(since: 103, heardRTCP: false))
        #expect(Self.match(watch.observe(.connected, secondsSinceRTCP: nil, now: 104), [.followReceiverReports], wait: 1))
        // The connect deadline no longer applies.
        #expect(Self.match(watch.observe(.connected, secondsSinceRTCP: 0.5, now: 130), [.heardFirstReport, .followReceiverReports], wait: 1))
        #expect(Self.match(watch.observe(.connected, secondsSinceRTCP: 0.2, now: 131), [.followReceiverReports], wait: 1))
    }

    /// An SFU that never reports counts as silent from the moment of connecting.
    @Test func noReportAtAllIsSilenceFromTheMomentOfConnecting() {
        var watch = Self.watch()
        _ = watch.observe(.connected, secondsSinceRTCP: nil, now: 100)
        // Near the limit the watch looks again just past it.
        #expect(Self.match(watch.observe(.connected, secondsSinceRTCP: nil, now: 109.5), [.followReceiverReports], wait: 0.55))
        #expect(Self.match(watch.observe(.connected, secondsSinceRTCP: nil, now: 110), [.followReceiverReports], wait: 0.05))
        #expect(Self.lost(watch.observe(.connected, secondsSinceRTCP: nil, now: 110.1)) == "https://sfu/whip has sent no RTCP for 10 s: the SFU is gone")
    }

    /// Once it has reported, silence counts from its last report, not from connecting.
    @Test func silenceCountsFromTheLastReport() {
        var watch = Self.watch()
        _ = watch.observe(.connected, secondsSinceRTCP: nil, now: 100)
        _ = watch.observe(.connected, secondsSinceRTCP: 0, now: 101)
        #expect(Self.match(watch.observe(.connected, secondsSinceRTCP: 9, now: 500), [.followReceiverReports], wait: 1))
        #expect(Self.lost(watch.observe(.connected, secondsSinceRTCP: 12.7, now: 503.7)) == "https://sfu/whip has sent no RTCP for 12 s: the SFU is gone")
    }

    @Test func aDropOrCloseAfterConnectingIsALoss() {
        for peer in [WHIPConnectionWatch.PeerState.disconnected, .closed] {
            var watch = Self.watch()
            _ = watch.observe(.connected, secondsSinceRTCP: nil, now: 100)
            #expect(Self.lost(watch.observe(peer, secondsSinceRTCP: 0.1, now: 101)) == "the WebRTC connection to https://sfu/whip was lost")
        }
    }

    @Test func aFailureEndsTheSessionConnectedOrNotWithWebrtcbinsWords() {
        var connecting = Self.watch()
        #expect(Self.lost(connecting.observe(.failed(detail: ""), secondsSinceRTCP: nil, now: 101)) == "the WebRTC connection to https://sfu/whip failed (ICE or DTLS)")
        var connected = Self.watch()
        _ = connected.observe(.connected, secondsSinceRTCP: nil, now: 100)
        let message = Self.lost(connected.observe(.failed(detail: "DTLS alert"), secondsSinceRTCP: 0.1, now: 101))
        #expect(message == "the WebRTC connection to https://sfu/whip failed: DTLS alert (ICE or DTLS)")
    }

    @Test func aShorterSilenceLimitIsHonoured() {
        var watch = WHIPConnectionWatch(endpoint: "e", now: 0, connectTimeout: 5, rtcpSilenceLimit: 3)
        _ = watch.observe(.connected, secondsSinceRTCP: nil, now: 1)
        #expect(Self.match(watch.observe(.connected, secondsSinceRTCP: 2.5, now: 2), [.heardFirstReport, .followReceiverReports], wait: 0.55))
        #expect(Self.lost(watch.observe(.connected, secondsSinceRTCP: 3.5, now: 3)) != nil)
    }
}
