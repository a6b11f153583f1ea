import ScreenCodec
import ScreenMedia
import ScreenTesting
import Testing

@Suite(.watchdog()) struct VPXCodecTests {
    /// Encodes `frame` and returns copies of what came out.
    private func encode(_ encoder: VPXEncoder, _ frame: VideoFrame) throws -> [CollectedFrame] {
        let sink = CollectingSink()
        try encoder.encode(frame) { try sink.write($0) }
        return sink.frames
    }

    private func decodeLast(_ decoder: VPXDecoder, _ frames: [CollectedFrame], check: (VideoFrame) -> Void) throws {
        var decoded = 0
        for frame in frames {
            try frame.payload.withUnsafeBytes { payload in
                try decoder.decode(payload, metadata: frame.metadata) { picture in
                    decoded += 1
                    check(picture)
                }
            }
        }
        #expect(decoded == frames.count)
    }

    @Test(arguments: [VideoCodec.vp9, .vp8])
    func quadrantsSurviveEncodeAndDecode(codec: VideoCodec) throws {
        let frame = VideoFrame(width: 320, height: 240)
        TestPattern.fillQuadrants(frame)
        frame.metadata = try FrameMetadata(text: "hello")
        let encoder = VPXEncoder(configuration: .init(codec: codec, bitrateKbps: 2000, framesPerSecond: 5))
        let frames = try encode(encoder, frame)
        #expect(frames.count == 1)
        #expect(frames.first?.isKeyframe == true)
        #expect(frames.first?.metadata == (try FrameMetadata(text: "hello")))
        let decoder = try VPXDecoder(codec: codec)
        try decodeLast(decoder, frames) { picture in
            #expect(picture.width == 320 && picture.height == 240)
            for (x, y) in [(40, 40), (280, 40), (40, 200), (280, 200), (150, 110)] {
                let expected = TestPattern.quadrantColor(x: x, y: y, width: 320, height: 240)
                #expect(TestPattern.difference(picture, x: x, y: y, expected) <= 12, "at \(x),\(y)")
            }
        }
    }

    @Test func onlyTheFirstFrameAndRequestedFramesAreKeyframes() throws {
        let frame = VideoFrame(width: 160, height: 96)
        TestPattern.fillQuadrants(frame)
        let encoder = VPXEncoder(configuration: .init(codec: .vp9))
        var keyflags: [Bool] = []
        for index in 0..<6 {
            frame.captureTime = MediaTime(value: Int64(index), timescale: 5)
            if index == 4 { encoder.requestKeyframe() }
            keyflags += try encode(encoder, frame).map(\.isKeyframe)
        }
        #expect(keyflags == [true, false, false, false, true, false])
    }

    @Test func aSizeChangeStartsWithAKeyframeAtTheNewSize() throws {
        let frame = VideoFrame(width: 160, height: 96)
        TestPattern.fillQuadrants(frame)
        let encoder = VPXEncoder(configuration: .init(codec: .vp9))
        let decoder = try VPXDecoder(codec: .vp9)
        try decodeLast(decoder, try encode(encoder, frame)) { #expect($0.width == 160) }
        frame.resize(width: 200, height: 120)
        TestPattern.fillQuadrants(frame)
        frame.captureTime = MediaTime(value: 1, timescale: 5)
        let resized = try encode(encoder, frame)
        #expect(resized.map(\.isKeyframe) == [true])
        #expect(resized.first?.width == 200)
        try decodeLast(decoder, resized) { picture in
            #expect(picture.width == 200 && picture.height == 120)
            #expect(TestPattern.difference(picture, x: 150, y: 90, TestPattern.quadrantColors[3]) <= 12)
        }
    }

    @Test func onlyChangedRectanglesAreConvertedAndTheChangeArrives() throws {
        let frame = VideoFrame(width: 256, height: 128)
        TestPattern.fill(frame) { _, _ in (0, 0, 0) }
        let encoder = VPXEncoder(configuration: .init(codec: .vp9, bitrateKbps: 2000))
        let decoder = try VPXDecoder(codec: .vp9)
        try decodeLast(decoder, try encode(encoder, frame)) { _ in }

        // Paint a white square but report only its rectangle as changed.
        let square = PixelRect(x: 64, y: 32, width: 32, height: 32)
        TestPattern.fill(frame) { x, y in
            square.intersection(PixelRect(x: x, y: y, width: 1, height: 1)).isEmpty ? (0, 0, 0) : (255, 255, 255)
        }
        frame.changedRects = [square]
        frame.captureTime = MediaTime(value: 1, timescale: 5)
        try decodeLast(decoder, try encode(encoder, frame)) { picture in
            #expect(TestPattern.difference(picture, x: 80, y: 48, (255, 255, 255)) <= 16)
            #expect(TestPattern.difference(picture, x: 10, y: 10, (0, 0, 0)) <= 16)
        }

        // Pixels outside the reported rectangles are not converted: a change there is not seen.
        TestPattern.fill(frame) { _, _ in (255, 0, 0) }
        frame.changedRects = []
        frame.captureTime = MediaTime(value: 2, timescale: 5)
        try decodeLast(decoder, try encode(encoder, frame)) { picture in
            #expect(TestPattern.difference(picture, x: 10, y: 10, (0, 0, 0)) <= 16)
        }
    }

    @Test func corruptInputIsAnErrorNotACrash() throws {
        let decoder = try VPXDecoder(codec: .vp9)
        let garbage: [UInt8] = (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        #expect(throws: CodecError.self) {
            try garbage.withUnsafeBytes { try decoder.decode($0) { _ in } }
        }
        #expect(throws: CodecError.self) {
            try [UInt8]().withUnsafeBytes { try decoder.decode($0) { _ in } }
        }
    }
}
