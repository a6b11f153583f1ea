import ScreenMedia
import Testing

@Suite struct FrameMetadataTests {
    @Test func thirtyTwoBytesAreAccepted() throws {
        let bytes = (0..<32).map { UInt8($0) }
        let metadata = try FrameMetadata(bytes: bytes)
        #expect(metadata.count == 32)
        #expect(metadata.bytes == bytes)
    }

    @Test func thirtyThreeBytesAreAClearErrorNotATruncation() {
        let text = String(repeating: "x", count: 33)
        let error = #expect(throws: FrameMetadataError.self) { try FrameMetadata(text: text) }
        #expect(error?.size == 33)
        #expect(error?.limit == 32)
        #expect(error?.description.contains("33 bytes") == true)
        #expect(error?.description.contains("limit is 32 bytes") == true)
    }

    @Test func sizeCountsUTF8BytesNotCharacters() {
        // 11 three-byte characters = 33 bytes.
        #expect(throws: FrameMetadataError.self) { try FrameMetadata(text: String(repeating: "€", count: 11)) }
        #expect(throws: Never.self) { try FrameMetadata(text: String(repeating: "€", count: 10)) }
    }

    @Test func iso8601CaptureTimeHasMilliseconds() {
        // 2026-11-22T05:10:22.123Z
        let time = WallClockTime(secondsSince1970: 1_795_324_222, nanoseconds: 123_456_789)
        let metadata = FrameMetadata.iso8601(time)
        #expect(metadata.text == "2026-11-22T05:10:22.123Z")
        #expect(metadata.count == 24)
    }

    @Test func binaryMetadataKeepsItsBytes() throws {
        let metadata = try FrameMetadata(bytes: [0, 65, 10, 13])
        #expect(metadata.text == "\0A\n\r")  // valid UTF-8, control characters included
        let invalid = try FrameMetadata(bytes: [0xFF, 0xFE])
        #expect(invalid.text == nil)
        #expect(!invalid.isUTF8)
        #expect(metadata.isUTF8)
        #expect(invalid.description == "fffe")
        #expect(FrameMetadata.empty.isEmpty)
        #expect(try FrameMetadata(text: "a") != FrameMetadata(text: "b"))
    }
}

@Suite struct PixelRectTests {
    @Test func parsesRegionOption() {
        #expect(PixelRect(parsing: "10,20,300,400") == PixelRect(x: 10, y: 20, width: 300, height: 400))
        #expect(PixelRect(parsing: " 1, 2, 3, 4") == PixelRect(x: 1, y: 2, width: 3, height: 4))
        #expect(PixelRect(parsing: "1,2,3") == nil)
        #expect(PixelRect(parsing: "1,2,0,4") == nil)
        #expect(PixelRect(parsing: "-1,2,3,4") == nil)
        #expect(PixelRect(parsing: "a,b,c,d") == nil)
    }

    @Test func intersectionAndUnion() {
        let a = PixelRect(x: 0, y: 0, width: 10, height: 10)
        let b = PixelRect(x: 5, y: 5, width: 10, height: 10)
        #expect(a.intersection(b) == PixelRect(x: 5, y: 5, width: 5, height: 5))
        #expect(a.union(b) == PixelRect(x: 0, y: 0, width: 15, height: 15))
        #expect(a.intersection(PixelRect(x: 20, y: 20, width: 1, height: 1)).isEmpty)
    }
}

@Suite struct VideoFrameTests {
    @Test func resizeReusesStorageAndMarksEverythingChanged() {
        let frame = VideoFrame(width: 64, height: 32)
        #expect(frame.bytesPerRow == 256)
        frame.changedRects = []
        #expect(frame.resize(width: 32, height: 16))
        #expect(frame.changedRects == [frame.bounds])
        #expect(!frame.resize(width: 32, height: 16))
    }
}
