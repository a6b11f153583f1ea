import Foundation
import ScreenCodec
import ScreenMedia
import ScreenRecording
import ScreenTesting
import Testing

/// `screenpub --pipewire-node` on a real compositor: GNOME's mutter, headless, with a GTK window of known
/// content and mutter's virtual pointer, recorded through mutter's own ScreenCast API. What the test producer
/// cannot show: mutter's buffers (memfd, BGRx, no damage), its cursor metadata size, its pointer drawn in each
/// cursor mode, and the compositor going away.
@Suite(.watchdog(), .serialized) struct MutterShareTests {
    static let screenpub = ChildProcess.productsDirectory + "/screenpub"

    /// A headless mutter with the test window, or the test is skipped, saying why, where mutter cannot start.
    func compositor(window: Bool = true, clock: Bool = false, portal: Bool = false) async throws -> HeadlessMutter {
        let mutter = try await HeadlessDesktopFailure.startedOrSkipped("mutter") { try await HeadlessMutter(portal: portal) }
        if window { try await mutter.showTestWindow(clock: clock) }
        return mutter
    }

    /// screenpub recording to a file with the session's environment (its bus, PipeWire and state directory).
    func share(_ arguments: [String], on mutter: HeadlessMutter, seconds: Double, path: String) throws -> ChildProcess {
        var environment = mutter.pipewire.environment.filter { !$0.key.hasPrefix("SCREENPUB_") }
        environment["DISPLAY"] = nil
        environment["WAYLAND_DISPLAY"] = nil
        return try ChildProcess(
            Self.screenpub, arguments + ["--output", path, "--duration", String(seconds), "--fps", "10"], environment: environment)
    }

    func share(_ cast: MutterScreenCast, on mutter: HeadlessMutter, seconds: Double, path: String) throws -> ChildProcess {
        try share(["--pipewire-node", String(cast.nodeID)], on: mutter, seconds: seconds, path: path)
    }

    /// A decoded picture's size, whether the window's colours are where they belong (red in the left half,
    /// blue in the right, at any size), and the pointer pixels at (300, 200) and (900, 500).
    struct Look: Equatable {
        var width = 0, height = 0
        var windowShown = false
        var pointerAtStart = 0, pointerAtEnd = 0
    }

    static func look(_ picture: VideoFrame) -> Look {
        let (width, height) = (picture.width, picture.height)
        return Look(
            width: width, height: height,
            windowShown: GTKTestWindow.isShown(in: picture),
            pointerAtStart: pointerPixels(picture, x: 300, y: 200), pointerAtEnd: pointerPixels(picture, x: 900, y: 500))
    }

    /// How many pixels of the 16×24 area whose top-left corner is (x, y) (where the arrow pointer is drawn, its
    /// hot spot at the tip) are far from the window's colour there.
    static func pointerPixels(_ picture: VideoFrame, x: Int, y: Int) -> Int {
        guard x < picture.width, y < picture.height else { return 0 }
        let background = x < picture.width / 2 ? HeadlessMutter.red : HeadlessMutter.blue
        var count = 0
        for row in y..<min(y + 24, picture.height) {
            for column in x..<min(x + 16, picture.width) where TestPattern.difference(picture, x: column, y: row, background) > 80 {
                count += 1
            }
        }
        return count
    }

    @Test(arguments: [HeadlessMutter.CursorMode.hidden, .embedded, .metadata])
    func thePointerIsDrawnAsTheCursorModeSays(mode: HeadlessMutter.CursorMode) async throws {
        let mutter = try await compositor()
        let cast = try await mutter.screenCast(cursorMode: mode)
        try await cast.movePointer(x: 300, y: 200)
        let path = mutter.pipewire.runtimeDirectory + "/pointer.webm"
        let share = try share(cast, on: mutter, seconds: 4, path: path)
        #expect(try await eventually(15) { share.errorsSoFar.contains("capturing PipeWire node") }, "\(share.errorsSoFar)")
        try await Task.sleep(for: .seconds(1.5))
        try await cast.movePointer(x: 900, y: 500)
        let outcome = await share.wait(timeout: 30)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        // mutter offers its cursor metadata for 384×384 bitmaps: a mode-2 stream that got none would say so.
        #expect(!outcome.standardError.contains("sends no cursor metadata"), "\(outcome.standardError)")

        let looks = try Pictures.measured(path, Self.look)
        let (first, last) = try (#require(looks.first), #require(looks.last))
        #expect(first.width == mutter.width && first.height == mutter.height)
        // The window's pixels come back: red on the left, blue on the right.
        #expect(first.windowShown && last.windowShown)
        let before = (first.pointerAtStart, last.pointerAtStart)
        let after = (first.pointerAtEnd, last.pointerAtEnd)
        if mode == .hidden {
            #expect(before == (0, 0) && after == (0, 0), "pointer pixels: at the start \(before), at the end \(after)")
        } else {
            // Where the pointer was, then where it went: drawn in the first picture, moved by the last.
            #expect(before.0 >= 20 && before.1 == 0, "pointer pixels at (300, 200): first \(before.0), last \(before.1)")
            #expect(after.0 == 0 && after.1 >= 20, "pointer pixels at (900, 500): first \(after.0), last \(after.1)")
        }
    }

    @Test func theCompositorGoingAwayEndsTheShareWithAClearErrorAndACompleteFile() async throws {
        let mutter = try await compositor(clock: true)
        let cast = try await mutter.screenCast(cursorMode: .embedded)
        let path = mutter.pipewire.runtimeDirectory + "/crash.webm"
        let share = try share(cast, on: mutter, seconds: 60, path: path)
        #expect(try await eventually(15) { share.errorsSoFar.contains("capturing PipeWire node") }, "\(share.errorsSoFar)")
        try await Task.sleep(for: .seconds(2))
        mutter.kill()
        let outcome = await share.wait(timeout: 30)
        #expect(outcome.status != 0 && outcome.status < 128, "status \(outcome.status): \(outcome.standardError)")
        #expect(outcome.standardError.contains("PipeWire node \(cast.nodeID) went away (its screen cast ended, or the compositor exited)"), "\(outcome.standardError)")
        // What was recorded up to then is said, and the file holds it.
        #expect(outcome.standardError.contains("wrote \(path)"), "\(outcome.standardError)")
        let looks = try Pictures.measured(path, Self.look)
        #expect(looks.count >= 2 && looks.allSatisfy(\.windowShown), "\(looks)")
    }

    @Test func thePortalsDialogIsAnsweredOnceAndItsGrantOutlivesARotatedMonitor() async throws {
        let mutter = try await compositor(window: false, portal: true)
        // The first start asks: GNOME's "Screen Share" dialog, answered with the virtual pointer (the monitor's
        // row, then Share; where this dialog draws them at 1280×720) until the grant arrives.
        let first = try share(["--backend", "pipewire"], on: mutter, seconds: 1, path: mutter.pipewire.runtimeDirectory + "/first.webm")
        #expect(try await eventually(20) { first.errorsSoFar.contains("asking the ScreenCast portal for a monitor") }, "\(first.errorsSoFar)")
        let pointer = try await mutter.screenCast(cursorMode: .hidden)
        let granted = try await pointer.answerScreenShareDialog {
            first.errorsSoFar.contains("capturing the screen cast granted by the portal") || first.hasExited
        }
        #expect(granted && first.errorsSoFar.contains("capturing the screen cast granted by the portal"), "\(first.errorsSoFar)")
        let firstOutcome = await first.wait(timeout: 30)
        #expect(firstOutcome.status == 0, "\(firstOutcome.standardError)")
        #expect(firstOutcome.standardError.contains("the screen-cast grant is remembered"), "\(firstOutcome.standardError)")

        // The second start sends the saved grant: no dialog, no click. The monitor then turns: mutter ends the
        // cast, and screenpub (--capture-retry) asks again with the grant and goes on at the new size.
        try await mutter.showTestWindow()
        let path = mutter.pipewire.runtimeDirectory + "/second.webm"
        let second = try share(["--backend", "pipewire", "--capture-retry", "1"], on: mutter, seconds: 12, path: path)
        #expect(try await eventually(20) { second.errorsSoFar.contains("capturing the screen cast granted by the portal") }, "\(second.errorsSoFar)")
        #expect(second.errorsSoFar.contains("asking the ScreenCast portal with the grant saved"), "\(second.errorsSoFar)")
        try await Task.sleep(for: .seconds(1.5))
        try await mutter.rotateMonitor()
        let rotated = "(\(mutter.height)×\(mutter.width))"
        #expect(try await eventually(20) { second.errorsSoFar.contains(rotated) }, "\(second.errorsSoFar)")
        let outcome = await second.wait(timeout: 40)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(!outcome.standardError.contains("for a monitor to share"), "the second start asked again: \(outcome.standardError)")
        // The ended cast is said in our words, not in the portal library's warnings.
        #expect(!outcome.standardError.contains("WARNING **"), "\(outcome.standardError)")

        let frames = try WebMReader(path: path).readAll()
        let looks = try Pictures.measured(path, Self.look)
        #expect(looks.count == frames.count)
        let turned = try #require(looks.firstIndex { $0.width == mutter.height && $0.height == mutter.width }, "\(looks)")
        #expect(looks[..<turned].allSatisfy { $0.width == mutter.width && $0.height == mutter.height })
        #expect(frames[turned].isKeyframe, "the first picture at the new size is a keyframe")
        #expect(looks.last?.windowShown == true, "\(looks.last.map { "\($0)" } ?? "no picture")")

        let restored = outcome.status == 0 && !outcome.standardError.contains("for a monitor to share")
        try await TestedDesktopsTable.expectRow(
            "GNOME", packages: [("mutter", "mutter"), ("xdg-desktop-portal-gnome", "xdg-desktop-portal-gnome")],
            found: [
                "Grant restored with no dialog": restored ? "yes, after the dialog once" : "no",
                "A still screen's first picture": looks.first?.windowShown == true ? "yes" : "no",
            ])
    }
}
