import ScreenMedia
import Testing

@testable import ScreenPipeline

/// What `--metadata` means and what each published frame then carries.
@Suite struct MetadataPolicyTests {
    @Test func theOptionIsTheCaptureTimeNoneOrAFixedText() throws {
        #expect(try MetadataPolicy(option: nil) == .captureTime, "the default")
        #expect(try MetadataPolicy(option: "time") == .captureTime)
        #expect(try MetadataPolicy(option: "none") == MetadataPolicy.none)
        #expect(try MetadataPolicy(option: "room 4") == .fixed(try FrameMetadata(text: "room 4")))
        // The words are exact: anything else is the text itself.
        #expect(try MetadataPolicy(option: "Time") == .fixed(try FrameMetadata(text: "Time")))
        #expect(try MetadataPolicy(option: "none ") == .fixed(try FrameMetadata(text: "none ")))
        #expect(try MetadataPolicy(option: "") == .fixed(.empty), "an empty text: frames carry nothing, as with none")
    }

    @Test func aFixedTextIsAtMost32BytesOfUTF8() throws {
        #expect(try MetadataPolicy(option: String(repeating: "x", count: 32)) == .fixed(try FrameMetadata(text: String(repeating: "x", count: 32))))
        let tooLong = #expect(throws: FrameMetadataError.self) { try MetadataPolicy(option: String(repeating: "x", count: 33)) }
        #expect(tooLong?.size == 33 && tooLong?.limit == 32)
        // Bytes, not characters: 16 two-byte letters fit, 17 do not.
        let letters = String(repeating: "é", count: 16)
        #expect(try MetadataPolicy(option: letters) == .fixed(try FrameMetadata(text: letters)))
        let tooMany = #expect(throws: FrameMetadataError.self) { try MetadataPolicy(option: letters + "é") }
        #expect(tooMany?.size == 34)
    }

    @Test func eachFrameCarriesItsCaptureTimeTheFixedBytesOrNothing() throws {
        let frame = VideoFrame(width: 2, height: 2)
        frame.wallClock = WallClockTime(secondsSince1970: 1_795_324_222, nanoseconds: 123_999_999)
        #expect(MetadataPolicy.captureTime.metadata(for: frame).text == "2026-11-22T05:10:22.123Z", "milliseconds, cut not rounded")
        frame.wallClock = WallClockTime(secondsSince1970: 0, nanoseconds: 0)
        #expect(MetadataPolicy.captureTime.metadata(for: frame).text == "1970-01-01T00:00:00.000Z")
        let fixed = try FrameMetadata(text: "room 4")
        #expect(MetadataPolicy.fixed(fixed).metadata(for: frame) == fixed)
        #expect(MetadataPolicy.none.metadata(for: frame).isEmpty)
    }
}
