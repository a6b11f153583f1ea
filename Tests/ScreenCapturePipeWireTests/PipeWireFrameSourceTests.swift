import Foundation
import Logging
import ScreenCapturePipeWire
import ScreenCodec
import ScreenMedia
import ScreenPipeline
import ScreenTesting
import Synchronization
import Testing

/// PipeWireFrameSource against a real, private PipeWire (pipewire + wireplumber on a private bus) and a
/// native pw_stream producer standing in for the compositor.
@Suite(.watchdog(), .serialized) struct PipeWireFrameSourceTests {
    /// What the capture thread saw: each consumed frame's counter (from its first pixel), size, a sample
    /// pixel, whether it started a new size, and its encoded form.
    final class Observer: FrameConsumer, @unchecked Sendable {
        // @unchecked: the encoder is used by the capture thread only; what the test reads is Locked or Atomic.
        struct Seen: Sendable {
            var counter: UInt32
            var width: Int
            var height: Int
            var sample: (r: UInt8, g: UInt8, b: UInt8)
            var sizeChanged: Bool
            var changedRects: [PixelRect]
        }
        let seen = Locked<[Seen]>([])
        let encoded = Locked<[(payload: [UInt8], width: Int, height: Int)]>([])
        let unchangedTicks = Atomic<Int>(0)
        let swizzled: Bool
        let encoder = RealtimeEncoder(configuration: .init(codec: .vp9, bitrateKbps: 2000, framesPerSecond: 10))
        let stopAfter: Int
        let stop: StopSignal

        init(swizzled: Bool, stopAfter: Int, stop: StopSignal) {
            self.swizzled = swizzled
            self.stopAfter = stopAfter
            self.stop = stop
        }

        func consume(_ frame: VideoFrame, sizeChanged: Bool) throws {
            // The producer wrote the counter's bytes into the first pixel; RGBx was swizzled to BGRA on the way.
            let first = frame.pixel(x: 0, y: 0)
            let bytes = swizzled ? [first.r, first.g, first.b, first.a] : [first.b, first.g, first.r, first.a]
            let counter = bytes.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
            let middle = frame.pixel(x: frame.width / 2, y: frame.height / 2)
            seen.withLock {
                $0.append(Seen(counter: counter, width: frame.width, height: frame.height, sample: (middle.r, middle.g, middle.b), sizeChanged: sizeChanged,
                    changedRects: frame.changedRects))
            }
            if sizeChanged { encoder.requestKeyframe() }
            try encoder.encode(frame) { output in
                encoded.withLock { $0.append((output.payloadBytes, output.width, output.height)) }
            }
            if seen.value.count >= stopAfter { stop.stop() }
        }

        func consumeUnchanged(_ frame: VideoFrame, at time: MediaTime) throws { unchangedTicks.add(1, ordering: .relaxed) }
        func missedTicks(_ count: Int) {}

        /// Decodes what was encoded, in order, handing each picture to `check`; returns how many there were.
        @discardableResult
        func decodeEach(_ check: (VideoFrame) -> Void) throws -> Int {
            let decoder = try FrameDecoder(codec: .vp9)
            var decoded = 0
            for packet in encoded.value {
                try packet.payload.withUnsafeBytes { bytes in
                    try decoder.decode(bytes) { picture in
                        decoded += 1
                        check(picture)
                    }
                }
            }
            return decoded
        }
    }

    /// Captures `node` at 10 fps on a thread of its own until `observer` stops it or the source throws.
    func capture(
        _ pipewire: PrivatePipeWire, node: UInt32, observer: Observer, firstFrameTimeout: Double = 5, mask: PrivacyMask = PrivacyMask()
    ) -> Task<Void, any Error> {
        let descriptor = Result { try pipewire.connect() }
        return Task {
            try await runOnDedicatedThread(name: "pw-test-capture") {
                let source = try PipeWireFrameSource(
                    options: PipeWireCaptureOptions(
                        remote: .fileDescriptor(try descriptor.get()), nodeID: node, firstFrameTimeout: firstFrameTimeout, mask: mask),
                    logger: Logger(label: "pw-test"))
                try source.run(framesPerSecond: 10, stop: observer.stop, consumer: observer)
            }
        }
    }

    /// The producer sends no damage metadata (as mutter) and changes only its first pixel (the counter) per
    /// frame: compared in tiles, each frame after the first is one changed 32×32 tile, not the whole picture.
    @Test func aProducerWithoutDamageIsComparedInTiles() async throws {
        let pipewire = try await PrivatePipeWire()
        let producer = try PipeWireTestProducer(on: pipewire, width: 320, height: 240, order: .bgrx, color: (30, 90, 160))
        let node = try await producer.nodeID()
        let observer = Observer(swizzled: false, stopAfter: 5, stop: StopSignal())
        try await capture(pipewire, node: node, observer: observer).value
        let seen = observer.seen.value
        #expect(seen.count == 5)
        #expect(seen.first?.changedRects == [PixelRect(x: 0, y: 0, width: 320, height: 240)])
        for frame in seen.dropFirst() {
            #expect(frame.changedRects == [PixelRect(x: 0, y: 0, width: 32, height: 32)], "\(frame.changedRects)")
        }
    }

    @Test func framesArriveInOrderWithTheirPixelsAndDecodeBack() async throws {
        let pipewire = try await PrivatePipeWire()
        let color: (r: UInt8, g: UInt8, b: UInt8) = (200, 40, 90)
        let producer = try PipeWireTestProducer(on: pipewire, width: 320, height: 240, order: .rgbx, color: color)
        let node = try await producer.nodeID()
        let observer = Observer(swizzled: true, stopAfter: 8, stop: StopSignal())
        try await capture(pipewire, node: node, observer: observer).value
        let seen = observer.seen.value
        #expect(seen.count == 8)
        #expect(seen.first?.sizeChanged == true)
        #expect(seen.allSatisfy { $0.width == 320 && $0.height == 240 })
        // In order: each frame is a newer buffer than the one before (the producer runs at 30 fps, we at 10).
        for (earlier, later) in zip(seen, seen.dropFirst()) { #expect(later.counter > earlier.counter, "\(earlier.counter) then \(later.counter)") }
        #expect((seen.last?.counter ?? 0) <= producer.framesProduced)
        for frame in seen {
            #expect(abs(Int(frame.sample.r) - 200) <= 1 && abs(Int(frame.sample.g) - 40) <= 1 && abs(Int(frame.sample.b) - 90) <= 1, "\(frame.sample)")
        }
        // Encoded, then decoded back: the colour survives VP9 (within what 4:2:0 and studio range allow).
        let decoded = try observer.decodeEach { picture in
            #expect(picture.width == 320 && picture.height == 240)
            #expect(TestPattern.difference(picture, x: 160, y: 120, color) <= 12)
        }
        #expect(decoded == 8)
    }

    @Test func aMaskRegionIsCoveredInEveryFrameOfANode() async throws {
        let pipewire = try await PrivatePipeWire()
        let color: (r: UInt8, g: UInt8, b: UInt8) = (200, 40, 90)
        let producer = try PipeWireTestProducer(on: pipewire, width: 320, height: 240, order: .bgrx, color: color)
        let node = try await producer.nodeID()
        let observer = Observer(swizzled: false, stopAfter: 6, stop: StopSignal())
        // The last rectangle reaches past the picture: what lies inside it is covered.
        let regions = [PixelRect(x: 100, y: 80, width: 120, height: 80), PixelRect(x: 280, y: 200, width: 200, height: 200)]
        try await capture(pipewire, node: node, observer: observer, mask: PrivacyMask(regions: regions)).value
        let decoded = try observer.decodeEach { picture in
            #expect(TestPattern.difference(picture, x: 20, y: 20, color) <= 12, "outside the regions: the picture")
            for (x, y) in [(104, 84), (216, 156), (160, 120), (300, 230), (318, 238)] {
                #expect(TestPattern.difference(picture, x: x, y: y, color) > 60, "(\(x), \(y)) is inside a region")
            }
        }
        #expect(decoded == 6)
    }

    @Test func aSizeChangeOnTheProducerContinuesAtTheNewSize() async throws {
        let pipewire = try await PrivatePipeWire()
        let producer = try PipeWireTestProducer(on: pipewire, width: 320, height: 240, order: .bgrx, color: (30, 160, 220))
        let node = try await producer.nodeID()
        let observer = Observer(swizzled: false, stopAfter: 1_000, stop: StopSignal())
        let capturing = capture(pipewire, node: node, observer: observer)
        #expect(try await eventually { observer.seen.value.count >= 3 })
        producer.resize(width: 480, height: 360)
        #expect(try await eventually { observer.seen.value.contains { $0.width == 480 } })
        try await Task.sleep(for: .milliseconds(500))
        observer.stop.stop()
        try await capturing.value
        let seen = observer.seen.value
        let firstLarge = try #require(seen.firstIndex { $0.width == 480 })
        #expect(seen[firstLarge].sizeChanged, "the first frame at the new size starts a new keyframe")
        #expect(seen[firstLarge...].allSatisfy { $0.width == 480 && $0.height == 360 })
        #expect(seen[firstLarge...].allSatisfy { abs(Int($0.sample.b) - 220) <= 1 && abs(Int($0.sample.g) - 160) <= 1 })
        // Decodable across the change: the encoder restarted with a keyframe at 480×360.
        var sizes: [Int] = []
        try observer.decodeEach { sizes.append($0.width) }
        #expect(sizes.first == 320 && sizes.last == 480)
    }

    /// A new size takes the picture away until the producer sends one at that size: the wait for it counts from the
    /// change, not from the capture's start (a resize after the first-frame timeout, its picture two ticks late,
    /// ended the capture with "sent no frame within 1.0 s"); and a picture that never comes is named as such.
    @Test func aPictureLateAfterASizeChangeIsWaitedForFromTheChange() async throws {
        let pipewire = try await PrivatePipeWire()
        let producer = try PipeWireTestProducer(on: pipewire, width: 320, height: 240, order: .bgrx, color: (30, 160, 220))
        let node = try await producer.nodeID()
        let observer = Observer(swizzled: false, stopAfter: 1_000, stop: StopSignal())
        let capturing = capture(pipewire, node: node, observer: observer, firstFrameTimeout: 1)
        #expect(try await eventually { observer.seen.value.count >= 3 })
        try await Task.sleep(for: .milliseconds(1_500))
        producer.freezePicture()
        producer.resize(width: 480, height: 360)
        try await Task.sleep(for: .milliseconds(500))
        producer.resumePicture()
        #expect(try await eventually { observer.seen.value.contains { $0.width == 480 } })
        observer.stop.stop()
        try await capturing.value

        // The same, the picture at the new size never coming: the capture ends, saying after what.
        let frozen = Observer(swizzled: false, stopAfter: 1_000, stop: StopSignal())
        let ending = capture(pipewire, node: node, observer: frozen, firstFrameTimeout: 1)
        #expect(try await eventually { frozen.seen.value.count >= 3 })
        producer.freezePicture()
        producer.resize(width: 320, height: 240)
        let outcome = await ending.result
        #expect(
            "\(outcome)".contains("sent no frame within 1.0 s of changing its size to 320×240"), "\(outcome)")
    }

    /// Records, for each consumed frame, the colours at a few points and how much of the frame it says changed.
    final class PointSampler: FrameConsumer, @unchecked Sendable {
        // @unchecked: `frames` is Locked; the rest is immutable.
        struct Sample: Sendable {
            var colors: [PixelColor]
            var changedArea: Int
        }
        struct PixelColor: Sendable, Equatable {
            var r: UInt8, g: UInt8, b: UInt8
        }
        let points: [(x: Int, y: Int)]
        let frames = Locked<[Sample]>([])
        init(points: [(x: Int, y: Int)]) { self.points = points }

        func consume(_ frame: VideoFrame, sizeChanged: Bool) throws {
            let colors = points.map { point in
                let pixel = frame.pixel(x: point.x, y: point.y)
                return PixelColor(r: pixel.r, g: pixel.g, b: pixel.b)
            }
            let area = frame.changedRects.reduce(0) { $0 + $1.width * $1.height }
            frames.withLock { $0.append(Sample(colors: colors, changedArea: area)) }
        }
        func consumeUnchanged(_ frame: VideoFrame, at time: MediaTime) throws {}
        func missedTicks(_ count: Int) {}
    }

    @Test func cursorMetadataIsDrawnAndMovesWithoutAPicture() async throws {
        let pipewire = try await PrivatePipeWire(busActivation: false)
        let background: (r: UInt8, g: UInt8, b: UInt8) = (20, 60, 200)
        let producer = try PipeWireTestProducer(on: pipewire, width: 320, height: 240, color: background)
        producer.setCursor(x: 100, y: 100)
        let node = try await producer.nodeID()
        // Inside the cursor at its first and its second place (the bitmap is 16×16 from the hotspot).
        let sampler = PointSampler(points: [(108, 108), (208, 158)])
        let stop = StopSignal()
        let descriptor = try pipewire.connect()
        let capturing = Task {
            try await runOnDedicatedThread(name: "pw-test-capture") {
                let source = try PipeWireFrameSource(
                    options: PipeWireCaptureOptions(remote: .fileDescriptor(descriptor), nodeID: node), logger: Logger(label: "pw-test"))
                try source.run(framesPerSecond: 20, stop: stop, consumer: sampler)
            }
        }
        let cursorColor = PointSampler.PixelColor(
            r: PipeWireTestProducer.cursorColor.r, g: PipeWireTestProducer.cursorColor.g, b: PipeWireTestProducer.cursorColor.b)
        let backgroundColor = PointSampler.PixelColor(r: background.r, g: background.g, b: background.b)
        let seenCursor = try await eventually(5) { sampler.frames.value.contains { $0.colors == [cursorColor, backgroundColor] } }
        #expect(seenCursor, "\(sampler.frames.value.prefix(3))")
        // Only cursor updates from now on: the pointer moves, the picture under it comes back.
        producer.freezePicture()
        try await Task.sleep(for: .milliseconds(200))
        let before = sampler.frames.value.count
        producer.setCursor(x: 200, y: 150)
        let seenMove = try await eventually(5) { sampler.frames.value.dropFirst(before).contains { $0.colors == [backgroundColor, cursorColor] } }
        #expect(seenMove, "\(sampler.frames.value.dropFirst(before - 2).prefix(4))")
        stop.stop()
        try await capturing.value
        let moved = try #require(sampler.frames.value.dropFirst(before).first { $0.colors == [backgroundColor, cursorColor] })
        // The frame says only the two cursor squares changed.
        #expect(moved.changedArea <= 2 * 16 * 16, "changed area \(moved.changedArea)")
    }

    @Test func theProducerGoingAwayEndsTheCaptureWithAClearError() async throws {
        let pipewire = try await PrivatePipeWire()
        let producer = try PipeWireTestProducer(on: pipewire, width: 160, height: 120, color: (10, 20, 30))
        let node = try await producer.nodeID()
        let observer = Observer(swizzled: false, stopAfter: 1_000, stop: StopSignal())
        let capturing = capture(pipewire, node: node, observer: observer)
        #expect(try await eventually { observer.seen.value.count >= 2 })
        let stopped = Date()
        producer.stop()
        // A capture that never notices would otherwise hang the suite: stop it after 10 s (then this fails).
        let watchdog = Task { try await Task.sleep(for: .seconds(10)); observer.stop.stop() }
        defer { watchdog.cancel() }
        let outcome = await capturing.result
        guard case .failure(let error as PipeWireCaptureError) = outcome else {
            Issue.record("expected a PipeWireCaptureError, got \(outcome)")
            observer.stop.stop()
            return
        }
        #expect(error.kind == .streamFailed)
        #expect(error.message.contains("node \(node)"), "\(error.message)")
        #expect(Date().timeIntervalSince(stopped) < 5, "ended without hanging")
    }

    @Test func aNodeThatDoesNotExistEndsWithinTheTimeout() async throws {
        let pipewire = try await PrivatePipeWire()
        let observer = Observer(swizzled: false, stopAfter: 1, stop: StopSignal())
        let started = Date()
        let outcome = await capture(pipewire, node: 4242, observer: observer, firstFrameTimeout: 1.5).result
        guard case .failure(let error as PipeWireCaptureError) = outcome else {
            Issue.record("expected a PipeWireCaptureError, got \(outcome)")
            return
        }
        #expect(error.kind == .streamFailed)
        #expect(error.message.contains("has no node 4242"), "\(error.message)")
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test func aConnectionThatIsNotPipeWireFailsClearly() async throws {
        // One end of a socket pair whose other end is closed: connecting "works", then the daemon is gone.
        var ends: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        close(ends[1])
        let descriptor = ends[0]
        let observer = Observer(swizzled: false, stopAfter: 1, stop: StopSignal())
        let started = Date()
        let outcome = await Task {
            try await runOnDedicatedThread(name: "pw-test-capture") {
                let source = try PipeWireFrameSource(
                    options: PipeWireCaptureOptions(remote: .fileDescriptor(descriptor), nodeID: 40, firstFrameTimeout: 2),
                    logger: Logger(label: "pw-test"))
                try source.run(framesPerSecond: 10, stop: observer.stop, consumer: observer)
            }
        }.result
        guard case .failure(let error as PipeWireCaptureError) = outcome else {
            Issue.record("expected a PipeWireCaptureError, got \(outcome)")
            return
        }
        #expect(error.message.contains("PipeWire"), "\(error.message)")
        #expect(Date().timeIntervalSince(started) < 5)
    }
}
