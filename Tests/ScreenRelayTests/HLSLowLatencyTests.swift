import Foundation
import ScreenMedia
import ScreenRecording
import Testing

@testable import ScreenRelay

/// LL-HLS on made-up windows: the playlist's parts, hint and server control; delta playlists; what a player's
/// query may ask; the requests that wait for a part.
@Suite struct HLSLowLatencyTests {
    static let lowLatency = HLSPlaylist.LowLatency(partTarget: 0.5, partHoldBack: 1.5, skipBoundary: 48)

    /// Part `index` of segment `segment` (which starts at `segment - 7` times 2 s, as ``snapshot()``'s do).
    static func part(_ segment: Int, _ index: Int, independent: Bool = false) -> HLSSnapshot.Part {
        let start = HLSPlaylistTests.at(Int64(segment - 7) * 2).millisecondsSince1970 + Int64(index) * 400
        return .init(
            segment: segment, index: index, start: WallClockTime(millisecondsSince1970: start), duration: 0.4, independent: independent,
            bytes: [UInt8(index)])
    }

    /// Segments 7 and 8 closed (8 with its two parts listed), 9 open with two parts.
    static func snapshot() -> HLSSnapshot {
        var snapshot = HLSSnapshot()
        snapshot.segments = [HLSPlaylistTests.segment(7, start: 0), HLSPlaylistTests.segment(8, start: 2)]
        snapshot.parts = [part(8, 0, independent: true), part(8, 1), part(9, 0, independent: true), part(9, 1)]
        snapshot.open = .init(sequence: 9, programDateTime: HLSPlaylistTests.at(4), initialization: 0, discontinuity: false)
        snapshot.dateRanges = [
            .init(id: "m", className: "c", start: HLSPlaylistTests.at(5)),
            .init(id: "in-part", className: "c", start: WallClockTime(millisecondsSince1970: HLSPlaylistTests.at(2).millisecondsSince1970 + 500)),
        ]
        return snapshot
    }

    @Test func theOpenSegmentsPartsFollowTheClosedOnesWithTheHintAfterThem() {
        let text = HLSPlaylist.media(Self.snapshot(), targetDuration: 8, query: "?token=t", lowLatency: Self.lowLatency)
        #expect(text == """
            #EXTM3U
            #EXT-X-VERSION:9
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-TARGETDURATION:8
            #EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,CAN-SKIP-UNTIL=48.0,PART-HOLD-BACK=1.500
            #EXT-X-PART-INF:PART-TARGET=0.500
            #EXT-X-MEDIA-SEQUENCE:7
            #EXT-X-DISCONTINUITY-SEQUENCE:0
            #EXT-X-MAP:URI="init-0.mp4?token=t"
            #EXT-X-PROGRAM-DATE-TIME:2026-11-23T02:13:20.000Z
            #EXTINF:2.000,
            seg-7.m4s?token=t
            #EXT-X-PROGRAM-DATE-TIME:2026-11-23T02:13:22.000Z
            #EXT-X-PART:DURATION=0.400,URI="part-8.0.m4s?token=t",INDEPENDENT=YES
            #EXT-X-DATERANGE:ID="in-part",CLASS="c",START-DATE="2026-11-23T02:13:22.500Z"
            #EXT-X-PART:DURATION=0.400,URI="part-8.1.m4s?token=t"
            #EXTINF:2.000,
            seg-8.m4s?token=t
            #EXT-X-PROGRAM-DATE-TIME:2026-11-23T02:13:24.000Z
            #EXT-X-PART:DURATION=0.400,URI="part-9.0.m4s?token=t",INDEPENDENT=YES
            #EXT-X-PART:DURATION=0.400,URI="part-9.1.m4s?token=t"
            #EXT-X-DATERANGE:ID="m",CLASS="c",START-DATE="2026-11-23T02:13:25.000Z"
            #EXT-X-PRELOAD-HINT:TYPE=PART,URI="part-9.2.m4s?token=t"

            """)
        // A plain playlist of the same window: no parts, the marker ahead of the last segment.
        let plain = HLSPlaylist.media(Self.snapshot(), targetDuration: 8, query: "")
        #expect(!plain.contains("PART") && !plain.contains("SERVER-CONTROL") && plain.contains("#EXT-X-VERSION:7"))
        #expect(plain.contains("#EXT-X-DATERANGE:ID=\"m\"") && plain.hasSuffix("seg-8.m4s\n"))
    }

    @Test func aPlayerReadsThePartsAndFollowsThemFromTheNewestKeyframe() throws {
        let text = HLSPlaylist.media(Self.snapshot(), targetDuration: 8, query: "", lowLatency: Self.lowLatency)
        let playlist = try #require(HLSPlaylistParser.media(text))
        #expect(playlist.partTarget == 0.5 && playlist.canBlockReload)
        #expect(playlist.segments.map(\.sequence) == [7, 8, 9] && playlist.segments.map(\.uri) == ["seg-7.m4s", "seg-8.m4s", nil])
        let start = HLSPlaylistCursor.start(playlist)
        #expect(start == HLSPlaylistCursor(sequence: 9, part: 0))
        let (fetches, next) = start.fetches(in: playlist)
        #expect(fetches.map(\.uri) == ["part-9.0.m4s", "part-9.1.m4s"] && fetches.map(\.startsSegment) == [true, false])
        #expect(next == HLSPlaylistCursor(sequence: 9, part: 2) && next.blockingQuery == "_HLS_msn=9&_HLS_part=2")
        // One that fell behind the listed parts takes whole segments, then parts again.
        let behind = HLSPlaylistCursor(sequence: 7, part: 0).fetches(in: playlist)
        #expect(behind.fetches.map(\.uri) == ["seg-7.m4s", "part-8.0.m4s", "part-8.1.m4s", "part-9.0.m4s", "part-9.1.m4s"])
    }

    @Test func aDeltaPlaylistSkipsWhatIsOlderThanTheBoundaryAndKeepsItsDateRanges() throws {
        var snapshot = HLSSnapshot()
        snapshot.segments = (0..<12).map { HLSPlaylistTests.segment($0, start: Int64($0) * 2) }  // 24 s
        snapshot.dateRanges = [.init(id: "old", className: "c", start: HLSPlaylistTests.at(1))]
        var skipping = Self.lowLatency
        skipping.skipBoundary = 10
        skipping.skip = true
        #expect(HLSPlaylist.skippedSegments(snapshot, boundary: 10) == 7, "segments ending more than 10 s before the end")
        let text = HLSPlaylist.media(snapshot, targetDuration: 3, query: "", lowLatency: skipping)
        #expect(text.contains("#EXT-X-SKIP:SKIPPED-SEGMENTS=7\n") && !text.contains("seg-6.m4s") && text.contains("seg-7.m4s"))
        #expect(text.contains("#EXT-X-MEDIA-SEQUENCE:0") && text.contains("ID=\"old\""), "a delta playlist keeps the date ranges")
        let parsed = try #require(HLSPlaylistParser.media(text))
        #expect(parsed.skipped == 7 && parsed.segments.first?.sequence == 7)
    }

    @Test func aPlayersQueryIsParsedWithBounds() throws {
        #expect(try HLSDeliveryDirectives(msn: "12", part: "3", skip: "YES") == .init(position: .init(segment: 12, part: 3), skip: true))
        #expect(try HLSDeliveryDirectives(msn: "12", part: nil, skip: "v2") == .init(position: .init(segment: 12, part: nil), skip: true))
        #expect(try HLSDeliveryDirectives(msn: nil, part: nil, skip: nil) == .init())
        for (msn, part, skip, reason) in [
            ("-1", nil, nil, "_HLS_msn must be"), ("99999999999999999999", nil, nil, "_HLS_msn must be"), ("1e3", nil, nil, "_HLS_msn"),
            (nil, "2", nil, "needs _HLS_msn"), ("3", "x", nil, "_HLS_part must be"), ("3", nil, "NO", "_HLS_skip must be"),
        ] as [(String?, String?, String?, String)] {
            #expect { try HLSDeliveryDirectives(msn: msn, part: part, skip: skip) } throws: {
                ($0 as? HLSDeliveryDirectives.Invalid)?.reason.contains(reason) == true
            }
        }
        // Waiting is for what comes soon: a segment two past the live one, a part three past the next.
        let snapshot = Self.snapshot()
        #expect(HLSDeliveryDirectives.tooFarAhead(.init(segment: 11, part: 0), of: snapshot) == nil)
        #expect(HLSDeliveryDirectives.tooFarAhead(.init(segment: 12, part: 0), of: snapshot) != nil)
        #expect(HLSDeliveryDirectives.tooFarAhead(.init(segment: 9, part: 5), of: snapshot) == nil)
        #expect(HLSDeliveryDirectives.tooFarAhead(.init(segment: 9, part: 6), of: snapshot) != nil)
        // In a later segment, its part 3 at most: its part 0 is the next one at the soonest.
        #expect(HLSDeliveryDirectives.tooFarAhead(.init(segment: 10, part: 3), of: snapshot) == nil)
        #expect(HLSDeliveryDirectives.tooFarAhead(.init(segment: 10, part: 4), of: snapshot) != nil)
        #expect(HLSDeliveryDirectives.tooFarAhead(.init(segment: 11, part: 50), of: snapshot) != nil)
    }

    @Test func waitingRequestsGoOnWhenTheirPartIsOutAndAreBounded() async throws {
        let waiting = HLSWaitingRequests(limit: 2)
        let current = Locked(Self.snapshot())
        let isOut: @Sendable (HLSSnapshot.Position) -> Bool = { position in current.withLock { $0.holds(position) } }
        // Already out: at once. The next part: when it is published.
        #expect(await waiting.wait(for: .init(segment: 9, part: 1), timeout: .seconds(10), isOut: isOut) == .ready)
        let next = Task { await waiting.wait(for: .init(segment: 9, part: 2), timeout: .seconds(10), isOut: isOut) }
        let late = Task { await waiting.wait(for: .init(segment: 10, part: 0), timeout: .milliseconds(100), isOut: isOut) }
        while waiting.count < 2 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(await waiting.wait(for: .init(segment: 9, part: 3), timeout: .seconds(10), isOut: isOut) == .tooMany)
        current.withLock { $0.parts.append(Self.part(9, 2)) }
        waiting.published(current.withLock { $0 })
        #expect(await next.value == .ready)
        try await Task.sleep(for: .milliseconds(150))
        waiting.expire(now: .now)
        #expect(await late.value == .timedOut)
        // HLS stops: whoever waits goes on, and later ones are answered at once.
        let stopped = Task { await waiting.wait(for: .init(segment: 10, part: 0), timeout: .seconds(10), isOut: isOut) }
        while waiting.count < 1 { try await Task.sleep(for: .milliseconds(5)) }
        waiting.stop()
        #expect(await stopped.value == .stopped)
        #expect(await waiting.wait(for: .init(segment: 10, part: 0), timeout: .seconds(10), isOut: isOut) == .stopped)
    }
}
