import ScreenMedia
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
        #expect(code(mutated { $0[2] = 2 }) == .unsupportedVersion)
        #expect(code(mutated { $0[3] = 64 }) == .malformed)  // header length
        #expect(code(mutated { $0[4] = 0x80 }) == .malformed)  // unknown flag
        #expect(code(mutated { $0[5] = 9 }) == .malformed)  // unknown codec
        #expect(code(mutated { $0[6] = 33 }) == .metadataTooLarge)
        #expect(code(mutated { $0[7] = 1 }) == .malformed)  // reserved
        #expect(code(mutated { $0[32] = 0; $0[33] = 0; $0[34] = 0; $0[35] = 0 }) == .malformed)  // timescale 0
        #expect(code(mutated { $0[32] = 0x80 }) == .malformed)  // negative timescale
        #expect(code(mutated { $0[44] = 0x7F }) == .tooLarge)  // payload length 2 GB: refused before any use
        #expect(code(mutated { $0[47] = 6 }) == .malformed)  // payload length disagrees with the message
    }

    @Test func randomBytesNeverCrashTheParser() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let length = Int.random(in: 0..<120, using: &generator)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if length >= 4, Bool.random(using: &generator) {
                bytes[0] = 0x53; bytes[1] = 0x50; bytes[2] = 1; bytes[3] = 48
            }
            _ = try? MediaFrameHeader.parse(bytes)
        }
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
