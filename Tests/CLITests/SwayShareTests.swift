import Foundation
import ScreenMedia
import ScreenRecording
import ScreenTesting
import Testing

/// screenpub through the real ScreenCast portal on a wlroots desktop: headless sway with xdg-desktop-portal-wlr
/// (``HeadlessSway``), as a sway user runs it — told only which backend and where to write. The grant is asked
/// once and restored after; a static screen still gives a restored share its first picture; the output changes
/// size mid-share; a masked region stays covered; the pointer (a virtual one: headless sway has none) is drawn in
/// by xdpw where it is; a window, which xdpw cannot share, is refused with a sentence.
@Suite(.watchdog(), .serialized) struct SwayShareTests {
    static let screenpub = ChildProcess.productsDirectory + "/screenpub"

    /// A headless sway with the test window, or the test is skipped, saying why, where sway cannot start.
    func desktop() async throws -> HeadlessSway {
        let sway = try await HeadlessDesktopFailure.startedOrSkipped("sway") { try await HeadlessSway() }
        try await sway.showTestWindow()
        return sway
    }

    /// screenpub recording through the portal, with the desktop session's environment.
    func share(_ arguments: [String], on sway: HeadlessSway, seconds: Double, path: String) throws -> ChildProcess {
        let environment = sway.environment.filter { !$0.key.hasPrefix("SCREENPUB_") }
        return try ChildProcess(
            Self.screenpub, ["--backend", "pipewire"] + arguments + ["--output", path, "--duration", String(seconds), "--fps", "10"],
            environment: environment)
    }

    /// A decoded picture's size, whether the window's colours are where they belong (red in the left half, blue in
    /// the right, at any size), and whether the top-left 160×120 corner shows the window's red.
    struct Look: Equatable {
        var width = 0, height = 0
        var windowShown = false
        var cornerShown = false
    }

    static func look(_ picture: VideoFrame) -> Look {
        let (width, height) = (picture.width, picture.height)
        return Look(
            width: width, height: height,
            windowShown: GTKTestWindow.isShown(in: picture),
            cornerShown: TestPattern.difference(picture, x: 80, y: 60, GTKTestWindow.red) <= 40)
    }

    @Test func theGrantIsAskedOnceAndARestoredShareOfAStaticScreenStillGetsItsFirstPicture() async throws {
        let sway = try await desktop()
        let directory = sway.pipewire.runtimeDirectory
        let first = try share([], on: sway, seconds: 2, path: directory + "/first.webm")
        let firstOutcome = await first.wait(timeout: 40)
        #expect(firstOutcome.status == 0, "\(firstOutcome.standardError)")
        #expect(firstOutcome.standardError.contains("the screen-cast grant is remembered"), "\(firstOutcome.standardError)")
        #expect(sway.dialogsShown == 1, "the chooser (the dialog) was shown \(sway.dialogsShown) times")
        // xdpw embeds the pointer itself: no fallback to drawing it from metadata.
        #expect(!firstOutcome.standardError.contains("cannot draw the pointer"), "\(firstOutcome.standardError)")
        let firstLooks = try Pictures.measured(directory + "/first.webm", Self.look)
        #expect(firstLooks.first == Look(width: sway.width, height: sway.height, windowShown: true, cornerShown: true), "\(firstLooks)")

        // Nothing on the screen changes from here on: wlroots copies a frame for the portal only once the screen
        // has changed since its last copy, so this share would start with no picture; screenpub asks sway to
        // repaint.
        let path = directory + "/second.webm"
        let second = try share([], on: sway, seconds: 3, path: path)
        let outcome = await second.wait(timeout: 40)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardError.contains("asking the ScreenCast portal with the grant saved"), "\(outcome.standardError)")
        #expect(sway.dialogsShown == 1, "the restored share showed the chooser again: \(sway.dialogsShown) times")
        #expect(outcome.standardError.contains("asked the compositor to repaint"), "\(outcome.standardError)")
        let looks = try Pictures.measured(path, Self.look)
        #expect(looks.first == Look(width: sway.width, height: sway.height, windowShown: true, cornerShown: true), "\(looks)")

        let restored = outcome.status == 0 && sway.dialogsShown == 1
        try await TestedDesktopsTable.expectRow(
            "wlroots", packages: [("sway", "sway"), ("xdg-desktop-portal-wlr", "xdg-desktop-portal-wlr")],
            found: [
                "Grant restored with no dialog": restored ? "yes" : "no",
                "A still screen's first picture": looks.first?.windowShown == true ? "yes, screenpub asks for a repaint" : "no",
            ])
    }

    @Test func theOutputChangingSizeMidShareGoesOnAtTheNewSizeWithTheMaskedRegionCovered() async throws {
        let sway = try await desktop()
        let path = sway.pipewire.runtimeDirectory + "/resized.webm"
        let share = try share(["--mask-region", "0,0,160,120"], on: sway, seconds: 6, path: path)
        #expect(try await eventually(20) { share.errorsSoFar.contains("capturing the screen cast granted by the portal") }, "\(share.errorsSoFar)")
        try await Task.sleep(for: .seconds(1.5))
        try await sway.command("output HEADLESS-1 mode 800x600")
        let outcome = await share.wait(timeout: 40)
        #expect(outcome.status == 0, "\(outcome.standardError)")

        let frames = try WebMReader(path: path).readAll()
        let looks = try Pictures.measured(path, Self.look)
        #expect(looks.count == frames.count)
        let resized = try #require(looks.firstIndex { $0.width == 800 && $0.height == 600 }, "\(looks)")
        #expect(resized > 0 && looks[..<resized].allSatisfy { $0.width == sway.width && $0.height == sway.height }, "\(looks)")
        #expect(frames[resized].isKeyframe, "the first picture at the new size is a keyframe")
        #expect(looks.allSatisfy { $0.windowShown && !$0.cornerShown }, "the window shown, the masked corner covered: \(looks)")
    }

    @Test func thePointerIsDrawnInWhereItIs() async throws {
        let sway = try await desktop()
        let pointer = try await sway.pointer()
        try await pointer.move(x: 300, y: 200)
        let path = sway.pipewire.runtimeDirectory + "/pointer.webm"
        let share = try share([], on: sway, seconds: 4, path: path)
        #expect(try await eventually(20) { share.errorsSoFar.contains("capturing the screen cast granted by the portal") }, "\(share.errorsSoFar)")
        try await Task.sleep(for: .seconds(1.5))
        try await pointer.move(x: 500, y: 300)
        let outcome = await share.wait(timeout: 40)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        // xdpw draws the pointer into the frames itself (cursor mode embedded): no metadata for screenpub to draw.
        #expect(!outcome.standardError.contains("cannot draw the pointer"), "\(outcome.standardError)")
        let looks = try Pictures.measured(path) { (MutterShareTests.pointerPixels($0, x: 300, y: 200), MutterShareTests.pointerPixels($0, x: 500, y: 300)) }
        let (first, last) = try (#require(looks.first), #require(looks.last))
        // Where the pointer was, then where it went: drawn in the first picture, moved by the last.
        #expect(first.0 >= 20 && first.1 == 0 && last.0 == 0 && last.1 >= 20, "pointer pixels (at 300,200; at 500,300): \(looks)")

        // (--no-cursor is not checked here: a headless wlroots output has no cursor plane, so its pointer is drawn
        // into the output itself and every copy of it shows the pointer, whatever the cursor mode.)
        let embedded = first.0 >= 20 && last.1 >= 20
        try await TestedDesktopsTable.expectRow("wlroots", packages: [], found: ["Pointer": embedded ? "embedded by xdpw" : "not drawn"])
    }

    @Test func aWindowIsRefusedWithASentenceWhereThePortalSharesOnlyMonitors() async throws {
        let sway = try await desktop()
        let path = sway.pipewire.runtimeDirectory + "/window.webm"
        let outcome = await (try share(["--portal-source", "window"], on: sway, seconds: 2, path: path)).wait(timeout: 40)
        #expect(outcome.status != 0 && outcome.status < 128, "status \(outcome.status)")
        #expect(
            outcome.standardError.contains("shares only whole monitors") && outcome.standardError.contains("--portal-source monitor"),
            "\(outcome.standardError)")
        #expect(!FileManager.default.fileExists(atPath: path), "nothing was recorded")
        #expect(sway.dialogsShown == 0)
        let refused = outcome.status != 0 && outcome.standardError.contains("shares only whole monitors")
        try await TestedDesktopsTable.expectRow("wlroots", packages: [], found: ["`--portal-source window`": refused ? "refused with a sentence" : "yes"])
    }
}
