import ScreenMedia
import Testing

/// The Annex B ⇄ length-prefixed conversions and the `avcC` reader, on well-formed and on hostile bytes: a file or
/// a peer says what it likes, and nothing it says may trap or read past its end.
@Suite struct H264AccessUnitTests {
    private let sps: [UInt8] = [0x67, 0x42, 0xC0, 0x1E, 0xDA, 0x02, 0x80]
    private let pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]
    private let idr: [UInt8] = [0x65, 0x88, 0x84, 0x00, 0x00, 0x03, 0x01, 0xFF]

    @Test func everyNALUnitGoesAcrossAfterItsLength() throws {
        // A 4-byte start code, a 3-byte one, zero bytes trailing a unit, junk before the first start code.
        let annexB: [UInt8] = [0xAB] + [0, 0, 0, 1] + sps + [0, 0, 1] + pps + [0, 0] + [0, 0, 0, 1] + idr
        let sample = try #require(H264AccessUnit.lengthPrefixed(annexB: annexB))
        #expect(sample == [0, 0, 0, 7] + sps + [0, 0, 0, 4] + pps + [0, 0, 0, 8] + idr)
        let back = try #require(H264AccessUnit.annexB(lengthPrefixed: sample, lengthSize: 4))
        #expect(back == [0, 0, 0, 1] + sps + [0, 0, 0, 1] + pps + [0, 0, 0, 1] + idr)
        // Two-byte and one-byte lengths, as other files may have.
        #expect(H264AccessUnit.annexB(lengthPrefixed: [0, 4] + pps + [0, 8] + idr, lengthSize: 2) == [0, 0, 0, 1] + pps + [0, 0, 0, 1] + idr)
        #expect(H264AccessUnit.annexB(lengthPrefixed: [4] + pps, lengthSize: 1) == [0, 0, 0, 1] + pps)
        // Bytes without a start code hold no NAL unit; nothing is nothing.
        #expect(H264AccessUnit.lengthPrefixed(annexB: [0x65, 0x88, 0x84]) == [])
        #expect(H264AccessUnit.lengthPrefixed(annexB: []) == [])
        #expect(H264AccessUnit.annexB(lengthPrefixed: [], lengthSize: 4) == [])
    }

    @Test func lengthsThatDoNotAddUpAreRefusedNotTrusted() {
        let hostile: [(String, [UInt8], Int)] = [
            ("a length past the end", [0, 0, 0, 9] + pps, 4),
            ("the largest length", [0xFF, 0xFF, 0xFF, 0xFF] + pps, 4),
            ("an empty unit", [0, 0, 0, 0] + pps, 4),
            ("a length cut short", [0, 0, 0, 4] + pps + [0, 0], 4),
            ("a length size MP4 does not have", [0, 0, 4] + pps, 3),
            ("a zero length size", pps, 0),
            ("a negative length size", pps, -4),
            ("a huge length size", pps, Int.max),
        ]
        for (name, bytes, size) in hostile {
            #expect(H264AccessUnit.annexB(lengthPrefixed: bytes, lengthSize: size) == nil, "\(name)")
        }
    }

    @Test func randomBytesNeverTrapEitherWay() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let count = Int.random(in: 0..<64, using: &generator)
            // Mostly zeros and ones, so that start codes and small lengths come up often.
            let bytes = (0..<count).map { _ in [0, 0, 1, 3, 0xFF, UInt8.random(in: 0...255, using: &generator)].randomElement(using: &generator)! }
            if let sample = H264AccessUnit.lengthPrefixed(annexB: bytes) {
                // What was made from Annex B always reads back.
                #expect(H264AccessUnit.annexB(lengthPrefixed: sample, lengthSize: 4) != nil)
            }
            for size in [1, 2, 4] { _ = H264AccessUnit.annexB(lengthPrefixed: bytes, lengthSize: size) }
            _ = H264DecoderConfiguration(record: bytes)
            _ = H264DecoderConfiguration(record: [1] + bytes)
        }
    }

    @Test func theAVCCRecordGivesTheLengthSizeAndTheParameterSets() throws {
        let sets = try #require(H264ParameterSets(accessUnit: [0, 0, 0, 1] + sps + [0, 0, 0, 1] + pps + [0, 0, 0, 1] + idr))
        let record = sets.decoderConfigurationRecord
        let configuration = try #require(H264DecoderConfiguration(record: record))
        #expect(configuration.lengthSize == 4)
        #expect(configuration.parameterSetsAnnexB == [0, 0, 0, 1] + sps + [0, 0, 0, 1] + pps)
        // A keyframe sample without its parameter sets gets them; one with them, and an inter frame, are as they are.
        let bare = [0, 0, 0, 8] + idr
        #expect(configuration.accessUnit(sample: bare, isKeyframe: true) == [0, 0, 0, 1] + sps + [0, 0, 0, 1] + pps + [0, 0, 0, 1] + idr)
        #expect(configuration.accessUnit(sample: bare, isKeyframe: false) == [0, 0, 0, 1] + idr)
        let whole = [0, 0, 0, 7] + sps + [0, 0, 0, 4] + pps + bare
        #expect(configuration.accessUnit(sample: whole, isKeyframe: true) == [0, 0, 0, 1] + sps + [0, 0, 0, 1] + pps + [0, 0, 0, 1] + idr)
        #expect(configuration.accessUnit(sample: [0, 0, 0, 99] + idr, isKeyframe: true) == nil)

        // Every prefix of the record is refused (none holds both sets), as are other versions and a length size of 3.
        for end in 0..<record.count { #expect(H264DecoderConfiguration(record: Array(record[..<end])) == nil, "\(end) bytes") }
        #expect(H264DecoderConfiguration(record: [2] + record.dropFirst()) == nil)
        var threeByteLengths = record
        threeByteLengths[4] = 0xFE
        #expect(H264DecoderConfiguration(record: threeByteLengths) == nil)
        // Counts of 31 SPSs and 255 PPSs whose lengths run past the end.
        #expect(H264DecoderConfiguration(record: [1, 66, 0xC0, 30, 0xFF, 0xFF, 0xFF, 0xFF]) == nil)
    }
}
