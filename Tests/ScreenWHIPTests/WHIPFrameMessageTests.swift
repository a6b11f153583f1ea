import ScreenMedia
import Testing

@testable import ScreenWHIP

struct WHIPFrameMessageTests {
    @Test func aMessageReadsBackAsItWasWritten() throws {
        let metadata = try FrameMetadata(text: "frame 12")
        var message = WHIPFrameMessage(wallClock: WallClockTime(secondsSince1970: 1_764_000_000, nanoseconds: 123_456_789), isKeyframe: true, metadata: metadata)
        message.rtpTimestamp = 0xDEAD_BEEF
        let bytes = message.encoded()
        #expect(bytes.count == WHIPFrameMessage.headerSize + 8)
        #expect(Array(bytes[0..<2]) == [1, 1])
        #expect(Array(bytes[2..<6]) == [0xDE, 0xAD, 0xBE, 0xEF], "the RTP timestamp sits where the C side writes it")
        let read = try WHIPFrameMessage(parsing: bytes)
        #expect(read == message)
        #expect(read.captureMicroseconds == 1_764_000_000_123_456)
        #expect(read.metadata == Array("frame 12".utf8))
    }

    @Test func theLargestMessageHoldsThirtyTwoBytesOfMetadata() throws {
        let metadata = try FrameMetadata(bytes: [UInt8](repeating: 0xAB, count: 32))
        let bytes = WHIPFrameMessage(wallClock: WallClockTime(secondsSince1970: 0, nanoseconds: 0), isKeyframe: false, metadata: metadata).encoded()
        #expect(bytes.count == WHIPFrameMessage.maximumSize)
        #expect(try WHIPFrameMessage(parsing: bytes).metadata.count == 32)
    }

    @Test func bytesAfterTheMetadataAreIgnored() throws {
        let bytes = WHIPFrameMessage(captureMicroseconds: 5, isKeyframe: false, metadata: [1, 2]).encoded() + [9, 9, 9]
        #expect(try WHIPFrameMessage(parsing: bytes).metadata == [1, 2])
    }

    @Test(arguments: [
        ([UInt8](repeating: 1, count: 14), WHIPFrameMessage.ParseError.tooShort(14)),
        ([2] + [UInt8](repeating: 0, count: 14), .unknownVersion(2)),
        ([1] + [UInt8](repeating: 0, count: 13) + [33] + [UInt8](repeating: 0, count: 33), .metadataTooLong(33)),
        ([1] + [UInt8](repeating: 0, count: 13) + [4, 1, 2], .truncatedMetadata(declared: 4, present: 2)),
        ([1] + [UInt8](repeating: 0, count: 13) + [255], .metadataTooLong(255)),
    ])
    func whatIsNotAMessageIsRefused(bytes: [UInt8], error: WHIPFrameMessage.ParseError) {
        #expect(throws: error) { try WHIPFrameMessage(parsing: bytes) }
    }

    @Test func aCaptureTimeOutOfRangeIsClampedNotTrapped() {
        let far = WHIPFrameMessage(wallClock: WallClockTime(secondsSince1970: .max, nanoseconds: 999_999_999), isKeyframe: false, metadata: .empty)
        #expect(far.captureMicroseconds == .max)
        let before = WHIPFrameMessage(wallClock: WallClockTime(secondsSince1970: .min, nanoseconds: 0), isKeyframe: false, metadata: .empty)
        #expect(before.captureMicroseconds == .min)
    }

    @Test func everyByteStringIsReadOrRefusedWithoutTrapping() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5000 {
            let count = Int.random(in: 0...60, using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if !bytes.isEmpty, Bool.random(using: &generator) { bytes[0] = 1 }
            if let message = try? WHIPFrameMessage(parsing: bytes) { #expect(message.metadata.count <= 32) }
        }
    }

    @Test func theMediaAnAnswerAcceptsAreItsMLinesWithAPort() {
        let sdp = "v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=mid:0\r\nm=audio 0 UDP/TLS/RTP/SAVPF 111\r\nm=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\n"
        #expect(WHIPAnswer.acceptedMedia(in: sdp) == ["video", "application"])
        #expect(WHIPAnswer.acceptedMedia(in: sdp.replacingOccurrences(of: "m=application 9", with: "m=application 0")) == ["video"])
    }
}
