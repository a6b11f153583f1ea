import Foundation
import ScreenMedia
import ScreenRecording
import Testing

@testable import ScreenRelay

/// The playlist text for made-up windows: where tags go, what the codec string says.
@Suite struct HLSPlaylistTests {
    static func at(_ seconds: Int64) -> WallClockTime { WallClockTime(millisecondsSince1970: 1_795_400_000_000 + seconds * 1000) }

    static func segment(
        _ sequence: Int, start: Int64, initialization: Int = 0, discontinuity: Bool = false, independent: Bool = true
    ) -> HLSSnapshot.Segment {
        .init(
            sequence: sequence, duration: 2, programDateTime: at(start), initialization: initialization, discontinuity: discontinuity,
            independent: independent, bytes: [1, 2, 3])
    }

    @Test func aWindowWithANewPictureSizeAndDateRanges() {
        var snapshot = HLSSnapshot()
        snapshot.segments = [Self.segment(7, start: 0), Self.segment(8, start: 2), Self.segment(9, start: 4, initialization: 1, discontinuity: true)]
        snapshot.discontinuitiesBefore = 2
        snapshot.dateRanges = [
            .init(id: "pause-1", className: HLSDateRangeClass.pause, start: Self.at(3), end: Self.at(5)),
            .init(id: "archive-a", className: HLSDateRangeClass.archive, start: Self.at(-10), attributes: ["X-NAME": HLSPlaylist.quoted("stand\"up")]),
        ]
        let text = HLSPlaylist.media(snapshot, targetDuration: 3, query: "?token=t")
        #expect(text == """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-TARGETDURATION:3
            #EXT-X-MEDIA-SEQUENCE:7
            #EXT-X-DISCONTINUITY-SEQUENCE:2
            #EXT-X-MAP:URI="init-0.mp4?token=t"
            #EXT-X-DATERANGE:ID="archive-a",CLASS="com.screenpub.archive",START-DATE="2026-11-23T02:13:10.000Z",X-NAME="standup"
            #EXT-X-PROGRAM-DATE-TIME:2026-11-23T02:13:20.000Z
            #EXTINF:2.000,
            seg-7.m4s?token=t
            #EXT-X-DATERANGE:ID="pause-1",CLASS="com.screenpub.pause",START-DATE="2026-11-23T02:13:23.000Z",END-DATE="2026-11-23T02:13:25.000Z"
            #EXT-X-PROGRAM-DATE-TIME:2026-11-23T02:13:22.000Z
            #EXTINF:2.000,
            seg-8.m4s?token=t
            #EXT-X-DISCONTINUITY
            #EXT-X-MAP:URI="init-1.mp4?token=t"
            #EXT-X-PROGRAM-DATE-TIME:2026-11-23T02:13:24.000Z
            #EXTINF:2.000,
            seg-9.m4s?token=t

            """)
    }

    @Test func whatThePlaylistSaysIsWhatAPlayerReads() throws {
        var snapshot = HLSSnapshot()
        snapshot.segments = [Self.segment(7, start: 0), Self.segment(8, start: 2)]
        snapshot.dateRanges = [.init(id: "m", className: "c", start: Self.at(1), attributes: ["X-T": HLSPlaylist.quoted("a, b"), "SCTE35-IN": "0xFC"])]
        let parsed = try #require(HLSPlaylistParser.media(HLSPlaylist.media(snapshot, targetDuration: 3, query: "?token=t")))
        #expect(parsed.targetDuration == 3 && parsed.mediaSequence == 7 && !parsed.ended)
        #expect(parsed.segments.map(\.uri) == ["seg-7.m4s?token=t", "seg-8.m4s?token=t"])
        #expect(parsed.segments.map(\.sequence) == [7, 8] && parsed.segments.allSatisfy { $0.initialization == "init-0.mp4?token=t" })
        #expect(parsed.segments[0].programDateTime == Self.at(0).iso8601 && parsed.segments[0].duration == 2)
        #expect(parsed.segments[0].dateRanges == [["ID": "m", "CLASS": "c", "START-DATE": Self.at(1).iso8601, "X-T": "a, b", "SCTE35-IN": "0xFC"]])
        #expect(HLSPlaylistParser.variants(HLSPlaylist.multivariant(snapshot, query: "?token=t")) == ["stream.m3u8?token=t"])
    }

    /// The H.264 variant is listed first at the higher of the two peaks (players that read no CODECS stay on it), with
    /// its own files; before it is packaged, screenpub's Constrained Baseline at the stream's size.
    @Test func theH264VariantIsListedFirstAtTheHigherPeak() throws {
        let primary = HLSPlaylist.Variant(codecs: "av01.0.04M.08", bandwidth: 90_000, width: 641, height: 480, framesPerSecond: 5, uri: "stream.m3u8")
        let expected = HLSPlaylist.Variant.h264(beside: primary, uri: HLSPlaylist.h264Playlist)
        #expect(expected.codecs.hasPrefix("avc1.42C0") && expected.width == 640 && expected.height == 480)
        let listed = HLSPlaylist.Variant.listed(primary, h264: expected)
        #expect(listed.map(\.uri) == ["h264.m3u8", "stream.m3u8"] && listed.map(\.bandwidth) == [90_000, 90_000])
        var measured = expected
        measured.bandwidth = 120_000
        #expect(HLSPlaylist.Variant.listed(primary, h264: measured).map(\.bandwidth) == [120_000, 120_000])
        #expect(HLSPlaylist.Variant.listed(primary, h264: nil) == [primary])
        let text = HLSPlaylist.multivariant(listed, query: "?token=t")
        #expect(HLSPlaylistParser.variants(text) == ["h264.m3u8?token=t", "stream.m3u8?token=t"])
        #expect(text.contains("#EXT-X-STREAM-INF:BANDWIDTH=90000,CODECS=\"\(expected.codecs)\",RESOLUTION=640x480,FRAME-RATE=5.000\nh264.m3u8?token=t"))
        var snapshot = HLSSnapshot()
        snapshot.segments = [Self.segment(7, start: 0)]
        let media = try #require(HLSPlaylistParser.media(HLSPlaylist.media(snapshot, targetDuration: 3, query: "", prefix: HLSPlaylist.h264Prefix)))
        #expect(media.segments.map(\.uri) == ["h264-seg-7.m4s"] && media.segments.allSatisfy { $0.initialization == "h264-init-0.mp4" })
    }

    /// A first request that found no two segments says why: nothing came, or what came did not fit the budget.
    @Test func aPlaylistThatCannotStartSaysWhy() {
        let configuration = HLSPackager.Configuration()
        var snapshot = HLSSnapshot()
        #expect(HLSRoutes.notPlayable(snapshot, h264: false, configuration: configuration).contains("no screen stream to package yet"))
        #expect(HLSRoutes.notPlayable(snapshot, h264: true, configuration: configuration).contains("has not sent its H.264 rendition"))
        snapshot.droppedForMemory = 1
        #expect(HLSRoutes.notPlayable(snapshot, h264: false, configuration: configuration).contains("do not fit the 64 MiB a variant may hold (--hls-session-memory)"))
    }

    @Test func theCodecStringNamesTheLevelTheStreamNeeds() {
        func mp4(_ codec: VideoCodec, _ width: Int, _ height: Int, _ rate: Double, _ chroma: ChromaFormat = .yuv420) -> String {
            CodedVideoFormat(codec: codec, chroma: chroma).codecString(width: width, height: height, framesPerSecond: rate, mp4: true)
        }
        #expect(mp4(.vp9, 320, 240, 5) == "vp09.00.20.08")
        #expect(mp4(.vp9, 1920, 1080, 5) == "vp09.00.40.08")
        #expect(mp4(.vp9, 1920, 1080, 60) == "vp09.00.41.08")
        #expect(mp4(.vp9, 3840, 2160, 30) == "vp09.00.50.08")
        #expect(mp4(.vp8, 640, 480, 30) == "vp08.00.30.08")
        // 4:4:4 takes the long form, which names the subsampling (03) and the BT.601 colour; VP8 has no 4:4:4.
        #expect(mp4(.vp9, 1920, 1080, 5, .yuv444) == "vp09.01.40.08.03.06.06.06.00")
        #expect(mp4(.vp8, 640, 480, 30, .yuv444) == "vp08.00.30.08")
        #expect(mp4(.av1, 1920, 1080, 5, .yuv444) == "av01.1.08M.08.0.000.06.06.06.0")
    }

    @Test func numbersAreWrittenWithoutALocale() {
        #expect(HLSPlaylist.decimal(2.0004, places: 3) == "2.000")
        #expect(HLSPlaylist.decimal(1.2345, places: 3) == "1.235")
        #expect(HLSPlaylist.decimal(12, places: 3) == "12.000")
        #expect(HLSPlaylist.decimal(0.05, places: 3) == "0.050")
    }

    @Test func theTargetDurationAndWindowFollowTheSegmentLength() {
        let two = HLSPackager.Configuration(segmentSeconds: 2)
        #expect(two.targetDuration == 3 && Double(two.windowSegments) * 2 >= 3 * 3)
        let one = HLSPackager.Configuration(segmentSeconds: 1)
        #expect(one.targetDuration == 2 && Double(one.windowSegments) * 1 >= 3 * 2)
        // The defaults: 6 s segments, whose keyframe may come two seconds late; a window longer than the delta
        // playlists' skip boundary (six target durations), so that they leave something out.
        let defaults = HLSPackager.Configuration()
        #expect(defaults.segmentSeconds == 6 && defaults.partSeconds == 0.5 && defaults.targetDuration == 8)
        #expect(defaults.skipBoundary == 48 && defaults.windowSegments == 10 && defaults.partHoldBack == 1.5)
    }
}

/// Markers as posted: what becomes a date range, and the reasons for what does not.
@Suite struct HLSMarkerTests {
    static let now = WallClockTime(millisecondsSince1970: 1_795_400_000_000)

    func parse(_ json: String) throws(HLSMarker.Invalid) -> HLSSnapshot.DateRange {
        try HLSMarker.parse(Data(json.utf8), now: Self.now)
    }

    @Test func aFullMarkerBecomesADateRange() throws {
        let range = try parse("""
            {"id":"break-1","class":"com.example.ad","startDate":"2026-11-23T10:00:00.250Z","duration":30,
             "attributes":{"X-TITLE":"Sponsor","X-SLOT":2,"SCTE35-OUT":"0xfc3025000000"}}
            """)
        #expect(range.id == "break-1" && range.className == "com.example.ad")
        #expect(range.start == WallClockTime(millisecondsSince1970: 1_795_428_000_250))
        #expect(HLSPlaylist.dateRangeTag(range) == """
            #EXT-X-DATERANGE:ID="break-1",CLASS="com.example.ad",START-DATE="2026-11-23T10:00:00.250Z",DURATION=30.000,SCTE35-OUT=0xFC3025000000,X-SLOT=2.000,X-TITLE="Sponsor"
            """)
    }

    @Test func onlyTheIdIsRequired() throws {
        let range = try parse(#"{"id":"chapter-2"}"#)
        #expect(range.className == HLSDateRangeClass.marker && range.start == Self.now && range.attributes.isEmpty)
    }

    @Test(arguments: [
        ("{}", "\"id\" is required"),
        (#"{"id":"a b"}"#, "\"id\" is required"),
        (#"{"id":"x","attributes":{"SCTE35-OUT":"0xFC3"}}"#, "even number of hex digits"),
        (#"{"id":"x","attributes":{"SCTE35-IN":"nothex"}}"#, "even number of hex digits"),
        (#"{"id":"x","attributes":{"TITLE":"no X- prefix"}}"#, "client attributes are X-"),
        (#"{"id":"x","attributes":{"X-T":"a\"b"}}"#, "double quote"),
        (#"{"id":"x","startDate":"yesterday"}"#, "ISO-8601"),
        (#"{"id":"x","duration":-1}"#, "duration"),
        (#"{"id":"x","colour":"red"}"#, "unknown field"),
        ("not json", "JSON object"),
        (#"{"id":"x","attributes":{"X-PAD":""# + String(repeating: "a", count: 5000) + #""}}"#, "at most 4096 bytes"),
    ])
    func aBadMarkerSaysWhy(json: String, reason: String) {
        #expect { try parse(json) } throws: { ($0 as? HLSMarker.Invalid)?.reason.contains(reason) == true }
    }
}
