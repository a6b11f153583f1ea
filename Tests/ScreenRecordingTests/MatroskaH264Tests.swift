import Foundation
import ScreenMedia
import ScreenRecording
import Testing

/// H.264 recordings: Matroska rather than WebM (which cannot carry it), and a reader that trusts none of the
/// NAL unit lengths a file says.
extension WebMRoundTripTests {
    @Test func anH264RecordingIsMatroskaWithTheAVCCAsCodecPrivate() throws {
        let path = temporaryPath("share.mkv")
        let written = try record(path: path, codec: .h264, count: 6) { try FrameMetadata(text: "frame \($0)") }
        let file = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        // The EBML header's DocType (0x4282) says matroska, not webm; the track is V_MPEG4/ISO/AVC with the avcC.
        #expect(file.starts(with: [0x1A, 0x45, 0xDF, 0xA3]))
        #expect(file.prefix(64).firstRange(of: [0x42, 0x82, 0x88] + Array("matroska".utf8)) != nil)
        #expect(file.firstRange(of: Array("V_MPEG4/ISO/AVC".utf8)) != nil)
        #expect(file.firstRange(of: Array("D_WEBVTT/SUBTITLES".utf8)) != nil && file.firstRange(of: Array("screenpub frame metadata".utf8)) != nil)
        let sets = try #require(written.first.flatMap { H264ParameterSets(accessUnit: $0.payload) })
        #expect(file.firstRange(of: sets.decoderConfigurationRecord) != nil)
    }

    @Test func aWebMNameForH264IsRefusedWithTheNameToGive() throws {
        let path = temporaryPath("share.webm")
        #expect {
            _ = try WebMWriter(path: path, codec: .h264, width: 320, height: 180, framesPerSecond: 5)
        } throws: { error in
            "\(error)".contains("WebM cannot carry h264") && "\(error)".contains(".mkv")
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aFileWhoseNALLengthsLieIsAReadErrorNotATrap() throws {
        let path = temporaryPath("hostile.mkv")
        let written = try record(path: path, codec: .h264, count: 4) { try FrameMetadata(text: "frame \($0)") }
        var file = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        // The second frame's sample: its first NAL unit's 4-byte length, found by the unit's first bytes.
        let second = try #require(H264AccessUnit.lengthPrefixed(annexB: written[1].payload))
        let at = try #require(file.firstRange(of: second.prefix(16))).lowerBound
        file.replaceSubrange(at..<at + 4, with: [0x7F, 0xFF, 0xFF, 0xF0])
        let hostile = temporaryPath("hostile-edited.mkv")
        try Data(file).write(to: URL(fileURLWithPath: hostile))
        let reader = try WebMReader(path: hostile)
        #expect(try reader.nextFrame()?.index == 0)
        #expect {
            _ = try reader.nextFrame()
        } throws: { error in
            "\(error)".contains("frame 1 of") && "\(error)".contains("NAL unit lengths")
        }
    }
}
