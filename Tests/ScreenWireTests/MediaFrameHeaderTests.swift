import ScreenMedia
import ScreenTesting
import ScreenWire
import Testing

@Suite struct MediaFrameHeaderTests {
    func sampleHeader(payloadLength: Int = 5) throws -> MediaFrameHeader {
        MediaFrameHeader(
            streamID: 7, sequence: 0x0102_0304_0506_0708, flags: [.keyframe], codec: .vp9, width: 1920, height: 1080,
            captureTime: MediaTime(value: -123_456_789_012, timescale: 1_000_000_000),
            wallClockMilliseconds: 1_795_324_222_123, metadata: try FrameMetadata(text: "2026-11-22T05:10:22.123Z"),
            payloadLength: payloadLength)
    }

    func message(_ header: MediaFrameHeader, payload: [UInt8]) -> [UInt8] { header.encoded() + payload }

    @Test func roundTripsEveryField() throws {
        let header = try sampleHeader()
        let bytes = message(header, payload: [9, 8, 7, 6, 5])
        #expect(bytes.count == 48 + 24 + 5)
        let (parsed, payload) = try MediaFrameHeader.parse(bytes)
        #expect(parsed == header)
        #expect(Array(bytes[payload]) == [9, 8, 7, 6, 5])
        #expect(parsed.isKeyframe)
    }

    @Test func theLayoutIsBigEndianAsDocumented() throws {
        let bytes = try sampleHeader().encoded()
        #expect(Array(bytes[0..<8]) == [0x53, 0x50, 1, 48, 0b01, 2, 24, 0])
        #expect(Array(bytes[8..<12]) == [0, 0, 0, 7])
        #expect(Array(bytes[12..<16]) == [0x07, 0x80, 0x04, 0x38])  // 1920, 1080
        #expect(Array(bytes[16..<24]) == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(Array(bytes[44..<48]) == [0, 0, 0, 5])
        #expect(Array(bytes[48..<72]) == Array("2026-11-22T05:10:22.123Z".utf8))
    }

    @Test func emptyMetadataAndPayload() throws {
        var header = try sampleHeader(payloadLength: 0)
        header.metadata = .empty
        header.flags = []
        let (parsed, payload) = try MediaFrameHeader.parse(header.encoded())
        #expect(parsed == header)
        #expect(payload.isEmpty)
    }

    private func code(_ bytes: [UInt8]) -> WireErrorCode? {
        do {
            _ = try MediaFrameHeader.parse(bytes)
            return nil
        } catch {
            return error.kind
        }
    }

    @Test func malformedFramesAreRejectedWithTheirCode() throws {
        let valid = message(try sampleHeader(), payload: [1, 2, 3, 4, 5])
        func mutated(_ change: (inout [UInt8]) -> Void) -> [UInt8] {
            var copy = valid
            change(&copy)
            return copy
        }
        #expect(code([]) == .malformed)
        #expect(code(Array(valid.prefix(20))) == .malformed)  // truncated header
        #expect(code(Array(valid.dropLast())) == .malformed)  // truncated payload
        #expect(code(valid + [0]) == .malformed)  // trailing bytes
        #expect(code(mutated { $0[0] = 0x47 }) == .malformed)  // bad magic
        #expect(code(mutated { $0[2] = 3 }) == .unsupportedVersion)
        #expect(code(mutated { $0[7] = 1 }) == .malformed)  // version 1 has no kind: reserved must be 0
        #expect(code(mutated { $0[3] = 64 }) == .malformed)  // header length
        #expect(code(mutated { $0[4] = 0x80 }) == .malformed)  // unknown flag
        #expect(code(mutated { $0[5] = 9 }) == .malformed)  // unknown codec
        #expect(code(mutated { $0[6] = 33 }) == .metadataTooLarge)
        #expect(code(mutated { $0[7] = 1 }) == .malformed)  // reserved
        #expect(code(mutated { $0[32] = 0; $0[33] = 0; $0[34] = 0; $0[35] = 0 }) == .malformed)  // timescale 0
        #expect(code(mutated { $0[32] = 0x80 }) == .malformed)  // negative timescale
        #expect(code(mutated { $0[44] = 0x7F }) == .tooLarge)  // payload length 2 GB: refused before any use
        #expect(code(mutated { $0[47] = 6 }) == .malformed)  // payload length disagrees with the message
        // A capture time of INT64_MAX/1 (or INT64_MIN/1), or a wall clock before 1970: refused where parsed.
        #expect(code(mutated { for i in 24..<32 { $0[i] = 0xFF }; $0[24] = 0x7F; for i in 32..<36 { $0[i] = 0 }; $0[35] = 1 }) == .malformed)
        #expect(code(mutated { for i in 24..<32 { $0[i] = 0 }; $0[24] = 0x80; for i in 32..<36 { $0[i] = 0 }; $0[35] = 1 }) == .malformed)
        #expect(code(mutated { $0[36] = 0xFF }) == .malformed)
    }

    /// Random bytes, and valid frames with random bytes changed: each is refused, or parses to a header whose
    /// encoding parses back to it (a version-2 video frame is written as version 1), with the payload running to
    /// the message's end.
    @Test func randomBytesParseToWhatTheyEncodeOrAreRefused() throws {
        var generator = SeededRandomNumberGenerator()
        let valid = message(try sampleHeader(), payload: [1, 2, 3, 4, 5])
        var parsedCount = 0
        for _ in 0..<20_000 {
            var bytes: [UInt8]
            if Bool.random(using: &generator) {
                bytes = valid
                for _ in 0..<Int.random(in: 1...3, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
            } else {
                bytes = (0..<Int.random(in: 0..<120, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                if bytes.count >= 4, Bool.random(using: &generator) {
                    bytes[0] = 0x53; bytes[1] = 0x50; bytes[2] = 1; bytes[3] = 48
                }
            }
            guard let (header, payload) = try? MediaFrameHeader.parse(bytes) else { continue }
            parsedCount += 1
            #expect(payload.upperBound == bytes.count, "\(bytes) (\(generator))")
            let again = try? MediaFrameHeader.parse(header.encoded() + bytes[payload])
            #expect(again?.header == header && again?.payload.count == payload.count, "\(bytes) (\(generator))")
        }
        #expect(parsedCount > 0, "some changes leave a valid frame (\(generator))")
    }

    @Test func everySingleByteMutationOfAValidFrameParsesOrFailsCleanly() throws {
        let valid = message(try sampleHeader(), payload: [1, 2, 3, 4, 5])
        for index in valid.indices {
            for value: UInt8 in [0, 1, 0x7F, 0x80, 0xFF] {
                var copy = valid
                copy[index] = value
                if let (header, payload) = try? MediaFrameHeader.parse(copy) {
                    #expect(payload.upperBound == copy.count)
                    #expect(header.metadata.count <= 32)
                }
            }
        }
    }
}

/// Audio frames (media frame version 2, kind 1) and how version-2 receivers treat what they do not know.
@Suite struct AudioFrameHeaderTests {
    let header = AudioFrameHeader(
        streamID: 3, sequence: 42, codec: .opus, channels: 2, samples: 960,
        captureTime: MediaTime(value: 5_000_000_123, timescale: 1_000_000_000), wallClockMilliseconds: 1_795_324_222_123,
        isSilence: true, payloadLength: 3)

    @Test func roundTripsEveryFieldWithTheDocumentedLayout() throws {
        let bytes = header.encoded() + [0xF8, 0xFF, 0xFE]
        #expect(Array(bytes[0..<8]) == [0x53, 0x50, 2, 48, 0b100, 1, 0, 1])
        #expect(Array(bytes[12..<16]) == [0, 2, 0x03, 0xC0])  // 2 channels, 960 samples
        guard case .audio(let parsed, let payload) = try MediaMessage.parse(bytes) else {
            Issue.record("not parsed as audio")
            return
        }
        #expect(parsed == header)
        #expect(Array(bytes[payload]) == [0xF8, 0xFF, 0xFE])
        // A receiver that takes only video says what it got.
        #expect(throws: WireError.self) { try MediaFrameHeader.parse(bytes) }
    }

    @Test func videoFramesParseAsVideoInBothVersions() throws {
        let video = MediaFrameHeader(
            streamID: 1, sequence: 0, flags: [.keyframe], codec: .vp8, width: 16, height: 16, captureTime: .zero,
            wallClockMilliseconds: 0, metadata: .empty, payloadLength: 1)
        var bytes = video.encoded() + [7]
        #expect(bytes[2] == 1)  // video stays version 1: receivers from before audio read it
        guard case .video(let parsed, _) = try MediaMessage.parse(bytes) else { Issue.record("not video"); return }
        #expect(parsed == video)
        bytes[2] = 2
        guard case .video(let again, _) = try MediaMessage.parse(bytes) else { Issue.record("v2 video not video"); return }
        #expect(again == video)
    }

    @Test func aKindFromALaterVersionIsSkippedNotRefused() throws {
        var bytes = header.encoded() + [1, 2, 3]
        bytes[7] = 9
        #expect(try MediaMessage.parse(bytes) == .unknownKind(9))
    }

    @Test func malformedAudioFramesAreRejected() throws {
        let valid = header.encoded() + [1, 2, 3]
        func code(_ change: (inout [UInt8]) -> Void) -> WireErrorCode? {
            var copy = valid
            change(&copy)
            do { _ = try MediaMessage.parse(copy); return nil } catch { return error.kind }
        }
        #expect(code { $0[4] = 0b001 } == .malformed)  // a keyframe flag on audio
        #expect(code { $0[5] = 7 } == .malformed)  // unknown audio codec
        #expect(code { $0[6] = 4 } == .malformed)  // audio carries no metadata
        #expect(code { $0[13] = 3 } == .malformed)  // 3 channels
        #expect(code { $0.removeLast() } == .malformed)  // length mismatch
        #expect(code { $0[44] = 1 } == .tooLarge)  // 16 MiB announced
    }
}
