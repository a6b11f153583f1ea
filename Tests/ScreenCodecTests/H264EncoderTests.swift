import ScreenCodec
import ScreenMedia
import ScreenTesting
import Testing

/// openh264 as screenpub's H.264 encoder: what it shares with the other codecs (keyframes on request, the codec
/// string from the bitstream, layers a relay can thin, metadata carried) and what it does its own way (its own
/// layer pattern, its rate held by skipping frames, 4:2:0 only).
@Suite(.watchdog()) struct H264EncoderTests {
    private func encode(_ encoder: any VideoEncoder, _ frame: VideoFrame) throws -> [CollectedFrame] {
        let sink = CollectingSink()
        try encoder.encode(frame) { try sink.write($0) }
        return sink.frames
    }

    /// A white square at a new place in every frame, on black: each frame changes, a little.
    private func drawSquare(_ frame: VideoFrame, at index: Int) {
        let square = PixelRect(x: 16 + (index * 24) % 256, y: 32 + (index * 8) % 160, width: 32, height: 32)
        TestPattern.fill(frame) { x, y in
            square.intersection(PixelRect(x: x, y: y, width: 1, height: 1)).isEmpty ? (0, 0, 0) : (255, 255, 255)
        }
        frame.markAllChanged()
        frame.captureTime = MediaTime(value: Int64(index), timescale: 5)
    }

    @Test func aKeyframeCarriesItsParameterSetsAndTheCodecStringComesFromThem() throws {
        let frame = VideoFrame(width: 320, height: 240)
        drawSquare(frame, at: 0)
        let encoder = makeVideoEncoder(.init(codec: .h264))
        let keyframe = try #require(try encode(encoder, frame).first)
        #expect(keyframe.isKeyframe && keyframe.codec == .h264)
        let sets = try #require(H264ParameterSets(accessUnit: keyframe.payload))
        #expect(sets.profile == 66 && sets.chromaFormat == 1)
        let format = try #require(CodedVideoFormat(codec: .h264, keyframe: keyframe.payload))
        #expect(format.chroma == .yuv420 && format.profile == 66)
        let codecString = format.codecString(width: 320, height: 240, framesPerSecond: 5)
        #expect(codecString == "avc1.42" + String(format: "%02X", sets.constraints) + String(format: "%02X", sets.level))
        let record = sets.decoderConfigurationRecord
        #expect(record.prefix(4) == [1, 66, UInt8(sets.constraints), UInt8(sets.level)])
        #expect(record.count == 6 + 2 + sets.sequenceParameterSet.count + 3 + sets.pictureParameterSet.count)

        drawSquare(frame, at: 1)
        let inter = try #require(try encode(encoder, frame).first)
        #expect(!inter.isKeyframe)
        #expect(H264ParameterSets(accessUnit: inter.payload) == nil)
    }

    @Test func keyframesComeOnRequestAndMetadataTravelsWithEveryFrame() throws {
        let frame = VideoFrame(width: 320, height: 240)
        let encoder = makeVideoEncoder(.init(codec: .h264, bitrateKbps: 2000))
        let decoder = try makeVideoDecoder(for: .h264)
        var keyflags: [Bool] = []
        for index in 0..<8 {
            drawSquare(frame, at: index)
            frame.metadata = try FrameMetadata(text: "frame \(index)")
            if index == 5 { encoder.requestKeyframe() }
            for coded in try encode(encoder, frame) {
                keyflags.append(coded.isKeyframe)
                #expect(coded.metadata == (try FrameMetadata(text: "frame \(index)")))
                var pictures = 0
                try coded.payload.withUnsafeBytes { try decoder.decode($0, metadata: coded.metadata) { _ in pictures += 1 } }
                #expect(pictures == 1)
            }
        }
        #expect(keyflags == [true, false, false, false, false, true, false, false])
    }

    /// openh264 lays out three layers as 0, 2, 1, 2, …; the layer-0 frames alone decode, and show the picture
    /// of the frame they were coded from.
    @Test func threeTemporalLayersThinToAStreamThatDecodes() throws {
        let frame = VideoFrame(width: 320, height: 240)
        let encoder = makeVideoEncoder(.init(codec: .h264, bitrateKbps: 2000, temporalLayers: 3))
        var frames: [(index: Int, coded: CollectedFrame)] = []
        for index in 0..<12 {
            drawSquare(frame, at: index)
            frames += try encode(encoder, frame).map { (index, $0) }
        }
        #expect(frames.map(\.coded.temporalLayer) == [0, 2, 1, 2, 0, 2, 1, 2, 0, 2, 1, 2])
        for highest in [0, 1] {
            let decoder = try makeVideoDecoder(for: .h264)
            for (index, coded) in frames where coded.temporalLayer <= highest {
                try coded.payload.withUnsafeBytes { payload in
                    try decoder.decode(payload) { picture in
                        let centre = (x: 32 + (index * 24) % 256, y: 48 + (index * 8) % 160)
                        #expect(TestPattern.difference(picture, x: centre.x, y: centre.y, (255, 255, 255)) <= 24, "frame \(index), layers ≤ \(highest)")
                    }
                }
            }
        }
    }

    /// Parameter sets no H.264 stream holds (a publisher's garbage) declare no format: no avcC, no CODECS of them.
    @Test func parameterSetsOfNoProfileDeclareNothing() {
        let startCode: [UInt8] = [0, 0, 0, 1]
        let pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]
        for sps in [[0x67] + [UInt8](repeating: 0xFF, count: 60), [0x67, 0x42, 0xC3, 0x1F, 0x8C], [0x67, 0x42, 0xC0, 0xFF, 0x8C], [0x67, 0x42]] as [[UInt8]] {
            #expect(H264ParameterSets(accessUnit: startCode + sps + startCode + pps) == nil, "\(sps.prefix(4))")
            #expect(CodedVideoFormat(codec: .h264, keyframe: startCode + sps + startCode + pps) == nil)
        }
        #expect(H264ParameterSets(accessUnit: startCode + [0x67, 0x42, 0xC0, 0x1F, 0x8C] + startCode + pps)?.profileLevelHex == "42C01F")
    }

    @Test func fourFourFourIsRefusedWithASentence() throws {
        let frame = VideoFrame(width: 64, height: 64)
        TestPattern.fillColouredLines(frame)
        let encoder = makeVideoEncoder(.init(codec: .h264, chroma: .yuv444))
        let error = #expect(throws: CodecError.self) { try encoder.encode(frame) { _ in } }
        #expect("\(error.map { "\($0)" } ?? "")".contains("H.264 is 4:2:0 only"))
        #expect(ChromaChoice.auto.resolved(codec: .h264, framesPerSecond: 5, bitrateKbps: 3000).chroma == .yuv420)
    }

    /// An odd-sized window is coded without its last column and row, which H.264's 4:2:0 cannot hold.
    @Test func anOddSizedPictureIsCodedAtTheEvenSizeBelow() throws {
        let frame = VideoFrame(width: 161, height: 97)
        TestPattern.fillQuadrants(frame)
        let encoder = makeVideoEncoder(.init(codec: .h264))
        let decoder = try makeVideoDecoder(for: .h264)
        let keyframe = try #require(try encode(encoder, frame).first)
        try keyframe.payload.withUnsafeBytes { payload in
            try decoder.decode(payload) { #expect($0.width == 160 && $0.height == 96) }
        }
    }
}
