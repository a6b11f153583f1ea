import Foundation
import Logging
import ScreenCaptureX11
import ScreenMedia
import ScreenTesting
import Testing

/// Capture tests against a real X server (a private Xvfb per test) drawn on by a real X client.
@Suite(.watchdog()) struct XShmFrameSourceTests {
    typealias RGB = (r: UInt8, g: UInt8, b: UInt8)
    static let red: RGB = (230, 30, 30), green: RGB = (30, 200, 40), blue: RGB = (20, 40, 220)
    static let white: RGB = (240, 240, 240), black: RGB = (0, 0, 0)

    private func pixel(_ c: RGB) -> UInt { XPainter.pixel(red: c.r, green: c.g, blue: c.b) }

    /// Paints the four quadrants of a width × height screen red, green, blue, white.
    private func paintQuadrants(_ painter: XPainter, width: Int, height: Int) {
        let colors = [Self.red, Self.green, Self.blue, Self.white]
        for (index, color) in colors.enumerated() {
            painter.createWindow(
                PixelRect(x: index % 2 * width / 2, y: index / 2 * height / 2, width: width / 2, height: height / 2),
                color: pixel(color))
        }
    }

    private func expectColor(_ frame: VideoFrame, x: Int, y: Int, _ color: RGB, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(TestPattern.difference(frame, x: x, y: y, color) <= 12, "pixel at \(x),\(y)", sourceLocation: sourceLocation)
    }

    @Test func rootWindowCaptureDecodesToThePaintedPixels() async throws {
        let display = try await VirtualDisplay(width: 640, height: 360)
        let painter = try XPainter(displayName: display.name)
        paintQuadrants(painter, width: 640, height: 360)
        let capture = try await LiveCapture(
            options: .init(displayName: display.name, drawsCursor: false), framesPerSecond: 20)
        #expect(capture.initialSize == (640, 360))
        #expect(await capture.wait { capture.sink.frames.count >= 1 })
        try await capture.stop()
        let picture = try #require(try capture.decodeLast())
        #expect(picture.width == 640 && picture.height == 360)
        expectColor(picture, x: 100, y: 60, Self.red)
        expectColor(picture, x: 540, y: 60, Self.green)
        expectColor(picture, x: 100, y: 300, Self.blue)
        expectColor(picture, x: 540, y: 300, Self.white)
        #expect(capture.sink.isFinished)
    }

    @Test func regionCaptureHasTheRegionsSizeAndContent() async throws {
        let display = try await VirtualDisplay(width: 640, height: 360)
        let painter = try XPainter(displayName: display.name)
        paintQuadrants(painter, width: 640, height: 360)
        // Straddles all four quadrants: 200×100 centred on the middle of the screen.
        let region = PixelRect(x: 220, y: 130, width: 200, height: 100)
        let capture = try await LiveCapture(
            options: .init(displayName: display.name, target: .region(region), drawsCursor: false),
            framesPerSecond: 20)
        #expect(await capture.wait { capture.sink.frames.count >= 1 })
        try await capture.stop()
        let picture = try #require(try capture.decodeLast())
        #expect(picture.width == 200 && picture.height == 100)
        expectColor(picture, x: 20, y: 10, Self.red)
        expectColor(picture, x: 180, y: 10, Self.green)
        expectColor(picture, x: 20, y: 90, Self.blue)
        expectColor(picture, x: 180, y: 90, Self.white)
    }

    @Test func windowCaptureFollowsTheWindowNotTheScreen() async throws {
        let display = try await VirtualDisplay(width: 640, height: 360)
        let painter = try XPainter(displayName: display.name)
        paintQuadrants(painter, width: 640, height: 360)
        let window = painter.createWindow(PixelRect(x: 300, y: 150, width: 160, height: 120), color: pixel(Self.blue))
        painter.fill(window: window, PixelRect(x: 80, y: 0, width: 80, height: 120), color: pixel(Self.green))
        let capture = try await LiveCapture(
            options: .init(displayName: display.name, target: .window(window), drawsCursor: false),
            framesPerSecond: 20)
        #expect(capture.initialSize == (160, 120))
        #expect(await capture.wait { capture.sink.frames.count >= 1 })
        try await capture.stop()
        let picture = try #require(try capture.decodeLast())
        #expect(picture.width == 160 && picture.height == 120)
        expectColor(picture, x: 30, y: 60, Self.blue)
        expectColor(picture, x: 130, y: 60, Self.green)
    }

    @Test func anIdleScreenEncodesNothingAndAChangeEncodesOneFrame() async throws {
        let display = try await VirtualDisplay(width: 640, height: 360)
        let painter = try XPainter(displayName: display.name)
        let background = painter.createWindow(PixelRect(x: 0, y: 0, width: 640, height: 360), color: pixel(Self.black))
        let capture = try await LiveCapture(
            options: .init(displayName: display.name, drawsCursor: false), framesPerSecond: 20)
        #expect(await capture.wait { capture.sink.frames.count >= 1 })
        // One second idle at 20 fps: about 20 ticks, none encoded.
        #expect(await capture.wait(timeout: 5) { capture.statistics.snapshot().framesUnchanged >= 15 })
        #expect(capture.sink.frames.count == 1)
        #expect(capture.statistics.snapshot().framesCaptured == 1)

        painter.fill(window: background, PixelRect(x: 100, y: 100, width: 50, height: 50), color: pixel(Self.white))
        #expect(await capture.wait { capture.sink.frames.count >= 2 })
        let unchangedBefore = capture.statistics.snapshot().framesUnchanged
        #expect(await capture.wait(timeout: 5) { capture.statistics.snapshot().framesUnchanged >= unchangedBefore + 10 })
        try await capture.stop()
        let frames = capture.sink.frames
        #expect(frames.count == 2)
        #expect(frames.map(\.isKeyframe) == [true, false])
        let picture = try #require(try capture.decodeLast())
        expectColor(picture, x: 125, y: 125, Self.white)
        expectColor(picture, x: 300, y: 300, Self.black)
    }

    @Test func aStillScreenIsRefinedOncePerStillPeriod() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        let capture = try await LiveCapture(
            options: .init(displayName: display.name, drawsCursor: false), framesPerSecond: 20, codec: .av1,
            refineAfter: 0.3)
        #expect(await capture.wait { capture.statistics.snapshot().refinements == 1 })
        let unchanged = capture.statistics.snapshot().framesUnchanged
        #expect(await capture.wait { capture.statistics.snapshot().framesUnchanged >= unchanged + 12 })
        #expect(capture.statistics.snapshot().refinements == 1, "once per still period")
        // A change, then stillness again: refined once more.
        painter.createWindow(PixelRect(x: 100, y: 100, width: 50, height: 50), color: XPainter.pixel(red: 240, green: 240, blue: 240))
        #expect(await capture.wait { capture.statistics.snapshot().refinements == 2 })
        try await capture.stop()
        let frames = capture.sink.frames
        #expect(frames.map(\.isKeyframe) == [true, false, false, false], "keyframe, refinement, change, refinement")
        let picture = try #require(try capture.decodeLast())
        expectColor(picture, x: 125, y: 125, Self.white)
    }

    @Test func keepaliveResendsTheUnchangedPictureAtItsInterval() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let capture = try await LiveCapture(
            options: .init(displayName: display.name, drawsCursor: false), framesPerSecond: 20,
            keepaliveInterval: 0.3)
        #expect(await capture.wait { capture.statistics.snapshot().keepalives >= 2 })
        try await capture.stop()
        let stats = capture.statistics.snapshot()
        #expect(stats.framesCaptured == 1)
        #expect(stats.framesEncoded == 1 + stats.keepalives)
        // Keepalives carry fresh timestamps and metadata.
        let frames = capture.sink.frames
        #expect(frames.count >= 3)
        #expect(frames[2].captureTime > frames[1].captureTime)
        #expect(frames[2].metadata != frames[0].metadata)
    }

    @Test func aRefreshAskedOfAnIdleScreenIsOneSmallDeltaOnTheNextTick() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let requests = PictureRequests()
        let capture = try await LiveCapture(
            options: .init(displayName: display.name, drawsCursor: false), framesPerSecond: 20, pictureRequests: requests)
        #expect(await capture.wait { capture.sink.frames.count == 1 })
        // Idle, no keepalive interval: nothing more until asked.
        try await Task.sleep(for: .milliseconds(300))
        #expect(capture.sink.frames.count == 1)
        requests.requestRefresh()
        #expect(await capture.wait { capture.sink.frames.count == 2 })
        try await Task.sleep(for: .milliseconds(300))
        try await capture.stop()
        let frames = capture.sink.frames
        #expect(frames.count == 2, "one refresh for one request")
        #expect(frames.map(\.isKeyframe) == [true, false])
        #expect(frames[1].payload.count < 200, "an unchanged picture costs a few bytes: \(frames[1].payload.count)")
        #expect(capture.statistics.snapshot().keepalives == 1)
    }

    @Test func aResizedWindowKeepsCapturingAtTheNewSizeWithAKeyframe() async throws {
        let display = try await VirtualDisplay(width: 640, height: 360)
        let painter = try XPainter(displayName: display.name)
        let window = painter.createWindow(PixelRect(x: 10, y: 10, width: 200, height: 100), color: pixel(Self.red))
        let capture = try await LiveCapture(
            options: .init(displayName: display.name, target: .window(window), drawsCursor: false),
            framesPerSecond: 20)
        #expect(await capture.wait { capture.sink.frames.count >= 1 })
        painter.resize(window: window, width: 300, height: 150, color: pixel(Self.green))
        #expect(await capture.wait { capture.sink.frames.contains { $0.width == 300 } })
        // The new area is painted after the resize: wait for the capture of that paint too (a loaded machine
        // may capture the resized window before it).
        _ = await capture.wait {
            (try? capture.decodeLast()).map { $0.width == 300 && TestPattern.difference($0, x: 250, y: 120, Self.green) <= 12 } ?? false
        }
        try await capture.stop()
        let resized = try #require(capture.sink.frames.first { $0.width == 300 })
        #expect(resized.isKeyframe)
        #expect(resized.height == 150)
        let picture = try #require(try capture.decodeLast())
        #expect(picture.width == 300 && picture.height == 150)
        expectColor(picture, x: 250, y: 120, Self.green)
    }

    @Test func aResizedScreenKeepsCapturingAtTheNewSizeWithAKeyframe() async throws {
        let display = try await VirtualDisplay(width: 640, height: 360)
        let capture = try await LiveCapture(options: .init(displayName: display.name, drawsCursor: false), framesPerSecond: 20)
        #expect(await capture.wait { capture.sink.frames.count >= 1 })
        // A RandR resize of the root window, as `xrandr --fb` does when a monitor changes mode.
        let resize = try await ChildProcess.run("/usr/bin/xrandr", ["-d", display.name, "--fb", "480x270"])
        #expect(resize.status == 0 || resize.standardError.contains("not large enough"), "\(resize.standardError)")
        #expect(await capture.wait { capture.sink.frames.contains { $0.width == 480 } })
        try await capture.stop()
        let resized = try #require(capture.sink.frames.first { $0.width == 480 })
        #expect(resized.isKeyframe && resized.height == 270)
        let picture = try #require(try capture.decodeLast())
        #expect(picture.width == 480 && picture.height == 270)
    }

    @Test func aMonitorCaptureHasTheMonitorsGeometry() async throws {
        let display = try await VirtualDisplay(width: 640, height: 360)
        let painter = try XPainter(displayName: display.name)
        paintQuadrants(painter, width: 640, height: 360)
        // Two RandR monitors side by side: the left and right halves of the screen.
        for (name, geometry) in [("left", "320/0x360/0+0+0"), ("right", "320/0x360/0+320+0")] {
            let result = try await ChildProcess.run("/usr/bin/xrandr", ["-d", display.name, "--setmonitor", name, geometry, "none"])
            #expect(result.status == 0, "\(result.standardError)")
        }
        let listing = try await ChildProcess.run("/usr/bin/xrandr", ["-d", display.name, "--listmonitors"])
        let rightIndex = try #require(
            listing.standardOutput.split(separator: "\n").compactMap { line -> Int? in
                guard line.contains("right") else { return nil }
                return Int(line.trimmingCharacters(in: .whitespaces).prefix { $0.isNumber })
            }.first)
        let capture = try await LiveCapture(
            options: .init(displayName: display.name, target: .monitor(rightIndex), drawsCursor: false),
            framesPerSecond: 20)
        #expect(capture.initialSize == (320, 360))
        #expect(await capture.wait { capture.sink.frames.count >= 1 })
        try await capture.stop()
        let picture = try #require(try capture.decodeLast())
        expectColor(picture, x: 160, y: 90, Self.green)
        expectColor(picture, x: 160, y: 270, Self.white)
    }

    @Test func thePointerIsDrawnInAndItsMovementIsAChange() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        painter.createWindow(PixelRect(x: 0, y: 0, width: 320, height: 240), color: pixel(Self.black))
        painter.movePointer(x: 300, y: 220)
        let region = PixelRect(x: 0, y: 0, width: 128, height: 128)
        let withCursor = try await LiveCapture(
            options: .init(displayName: display.name, target: .region(region), drawsCursor: true),
            framesPerSecond: 20)
        #expect(await withCursor.wait { withCursor.sink.frames.count >= 1 })
        painter.movePointer(x: 64, y: 64)
        #expect(await withCursor.wait { withCursor.sink.frames.count >= 2 })
        try await withCursor.stop()
        let picture = try #require(try withCursor.decodeLast())
        var brightest = 0
        for y in 48..<80 {
            for x in 48..<80 { brightest = max(brightest, Int(picture.pixel(x: x, y: y).g)) }
        }
        #expect(brightest > 100, "the pointer should be visible near 64,64")

        let withoutCursor = try await LiveCapture(
            options: .init(displayName: display.name, target: .region(region), drawsCursor: false),
            framesPerSecond: 20)
        #expect(await withoutCursor.wait { withoutCursor.sink.frames.count >= 1 })
        try await withoutCursor.stop()
        let plain = try #require(try withoutCursor.decodeLast())
        expectColor(plain, x: 64, y: 64, Self.black)
    }

    @Test func aVanishedServerEndsCaptureWithAClearError() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let capture = try await LiveCapture(options: .init(displayName: display.name), framesPerSecond: 20)
        #expect(await capture.wait { capture.sink.frames.count >= 1 })
        display.stop()
        let error = await capture.waitForFailure(timeout: 5)
        let captureError = try #require(error as? X11CaptureError)
        #expect(captureError.kind == .connectionLost)
        #expect(captureError.description.contains("went away"))
        #expect(capture.sink.isFinished, "outputs are finished after a failure")
    }

    @Test func aClosedWindowEndsCaptureWithAClearError() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        let window = painter.createWindow(PixelRect(x: 10, y: 10, width: 100, height: 100), color: pixel(Self.red))
        let capture = try await LiveCapture(
            options: .init(displayName: display.name, target: .window(window)), framesPerSecond: 20)
        #expect(await capture.wait { capture.sink.frames.count >= 1 })
        painter.destroy(window: window)
        let error = try #require(await capture.waitForFailure(timeout: 5) as? X11CaptureError)
        #expect(error.kind == .windowClosed)
    }

    @Test func badTargetsAreRefusedBeforeCapturing() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let logger = Logger(label: "test")
        func kind(_ options: X11CaptureOptions) -> X11CaptureFailure? {
            do {
                _ = try XShmFrameSource(options: options, logger: logger)
                return nil
            } catch {
                return error.kind
            }
        }
        #expect(kind(.init(displayName: display.name, target: .window(0x7ff_ffff))) == .unknownWindow)
        #expect(kind(.init(displayName: display.name, target: .region(PixelRect(x: 300, y: 0, width: 50, height: 50)))) == .badRegion)
        #expect(kind(.init(displayName: display.name, target: .monitor(5))) == .unknownMonitor)
        #expect(kind(.init(displayName: ":4242")) == .cannotOpenDisplay)
        #expect(kind(.init(displayName: display.name, target: .monitor(0))) == nil)
    }

    @Test func xGetImageFallbackCapturesTheSamePixels() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        paintQuadrants(painter, width: 320, height: 240)
        let capture = try await LiveCapture(
            options: .init(displayName: display.name, drawsCursor: false, usesSharedMemory: false),
            framesPerSecond: 20)
        #expect(await capture.wait { capture.sink.frames.count >= 1 })
        try await capture.stop()
        let picture = try #require(try capture.decodeLast())
        expectColor(picture, x: 40, y: 40, Self.red)
        expectColor(picture, x: 280, y: 200, Self.white)
    }
}
