import Foundation
import ScreenCaptureX11
import ScreenCodec
import ScreenMedia
import ScreenTesting
import Testing

/// `--mask-window` on a real X server: a window of a secret colour whose class matches appears, moves, resizes,
/// goes under and over another, disappears and comes back, is dragged quickly, while the capture runs at 30 fps;
/// not one coded frame, the one in which it first appears included, shows its colour. Windows that do not match stay visible.
@Suite(.watchdog()) struct PrivacyMaskTests {
    static let secret = (r: UInt8(255), g: UInt8(0), b: UInt8(255))
    static let other = (r: UInt8(0), g: UInt8(200), b: UInt8(0))

    /// For every coded frame in order: whether it shows the secret colour, and the other window's.
    static func decodeEvery(_ frames: [CollectedFrame], codec: VideoCodec) throws -> [(secret: Bool, other: Bool)] {
        let decoder = try makeVideoDecoder(for: codec)
        var seen: [(secret: Bool, other: Bool)] = []
        for frame in frames {
            try frame.payload.withUnsafeBytes { bytes in
                try decoder.decode(bytes, metadata: frame.metadata) { picture in
                    seen.append((TestPattern.shows(picture, secret), TestPattern.shows(picture, other)))
                }
            }
        }
        return seen
    }

    @Test(arguments: [VideoCodec.av1, .vp9])
    func aMatchingWindowIsCoveredInEveryFrameWhateverItDoes(codec: VideoCodec) async throws {
        let display = try await VirtualDisplay(width: 640, height: 360)
        let painter = try XPainter(displayName: display.name)
        painter.fill(PixelRect(x: 0, y: 0, width: 640, height: 360), color: XPainter.pixel(red: 90, green: 90, blue: 110))
        let mask = PrivacyMask(windowPatterns: [try WindowPattern("*keepass*")])
        let capture = try await LiveCapture(
            options: X11CaptureOptions(displayName: display.name, drawsCursor: false, mask: mask), framesPerSecond: 30, codec: codec)
        #expect(await capture.wait { capture.sink.frames.count >= 1 })

        let terminal = painter.createApplicationWindow(
            PixelRect(x: 20, y: 20, width: 120, height: 90), color: XPainter.pixel(red: 0, green: 200, blue: 0),
            instance: "xterm", class: "XTerm", title: "shell")
        let vault = painter.createApplicationWindow(
            PixelRect(x: 200, y: 100, width: 160, height: 120), color: XPainter.pixel(red: 255, green: 0, blue: 255),
            instance: "keepassxc", class: "KeePassXC", title: "Passwords.kdbx - KeePassXC")
        func settle() async throws { try await Task.sleep(for: .milliseconds(120)) }
        try await settle()
        painter.move(window: vault, x: 300, y: 160)
        try await settle()
        painter.resize(window: vault, width: 220, height: 150, color: XPainter.pixel(red: 255, green: 0, blue: 255))
        try await settle()
        painter.move(window: terminal, x: 280, y: 150)
        painter.lower(window: vault)
        try await settle()
        painter.raise(window: vault)
        try await settle()
        painter.unmap(window: vault)
        try await settle()
        painter.map(window: vault)
        try await settle()
        for step in 0..<6 {
            painter.move(window: vault, x: 40 + step * 60, y: 40 + step * 20)
            try await Task.sleep(for: .milliseconds(40))
        }
        // Dragged quickly: it moves while pictures are being taken, between the walk of the windows and the grab.
        for step in 0..<80 {
            painter.move(window: vault, x: 40 + (step * 37) % 400, y: 20 + (step * 23) % 200)
            try await Task.sleep(for: .milliseconds(4))
        }
        try await settle()
        let framesBeforeRename = capture.sink.frames.count
        // A title change that makes a window match hides it too.
        painter.setTitle(window: terminal, "KeePass export")
        try await Task.sleep(for: .milliseconds(300))
        try await capture.stop()

        let frames = capture.sink.frames
        let seen = try Self.decodeEvery(frames, codec: codec)
        #expect(seen.count == frames.count && frames.count > 10, "\(frames.count) frames")
        let leaks = seen.indices.filter { seen[$0].secret }
        #expect(leaks.isEmpty, "frames showing the hidden window: \(leaks) of \(seen.count)")
        #expect(seen[..<framesBeforeRename].contains { $0.other }, "the window that does not match is shown")
        #expect(seen.last?.other == false, "a window whose new title matches is hidden")
    }

    @Test func aWindowAWindowManagerReparentsIsFoundInItsFrame() async throws {
        guard access("/usr/bin/openbox", X_OK) == 0 else {
            Issue.record("openbox is not installed (apt-get install openbox)")
            return
        }
        let display = try await VirtualDisplay(width: 640, height: 360)
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = display.name
        let manager = try ChildProcess("/usr/bin/openbox", ["--sm-disable"], environment: environment)
        defer { manager.endInBackground(signal: SIGTERM) }
        let painter = try XPainter(displayName: display.name)
        // Managing once a new window gets a frame of openbox's.
        let probe = painter.createApplicationWindow(
            PixelRect(x: 400, y: 200, width: 80, height: 60), color: XPainter.pixel(red: 0, green: 200, blue: 0),
            instance: "probe", class: "Probe", title: "probe")
        #expect(try await eventually(20) { painter.parent(of: probe) != painter.root }, "openbox did not manage windows: \(manager.errorsSoFar)")

        let capture = try await LiveCapture(
            options: X11CaptureOptions(displayName: display.name, drawsCursor: false, mask: PrivacyMask(windowPatterns: [try WindowPattern("keepassxc")])),
            framesPerSecond: 30, codec: .vp9)
        #expect(await capture.wait { capture.sink.frames.count >= 1 })
        let vault = painter.createApplicationWindow(
            PixelRect(x: 60, y: 60, width: 200, height: 140), color: XPainter.pixel(red: 255, green: 0, blue: 255),
            instance: "keepassxc", class: "KeePassXC", title: "Passwords.kdbx")
        #expect(try await eventually(30) { painter.parent(of: vault) != painter.root }, "the window was not reparented")
        for step in 0..<4 {
            try await Task.sleep(for: .milliseconds(150))
            painter.move(window: vault, x: 60 + step * 50, y: 60 + step * 20)
        }
        try await Task.sleep(for: .milliseconds(300))
        try await capture.stop()
        let seen = try Self.decodeEvery(capture.sink.frames, codec: .vp9)
        #expect(seen.count > 3)
        let leaks = seen.indices.filter { seen[$0].secret }
        #expect(leaks.isEmpty, "frames showing the hidden window: \(leaks) of \(seen.count)")
        #expect(seen.contains { $0.other }, "the managed window that does not match is shown")
    }
}
