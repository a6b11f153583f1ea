import Foundation
import ScreenMedia
import ScreenTesting
import Testing

/// screenpub through the real ScreenCast portal on KDE: headless KWin with xdg-desktop-portal-kde
/// (``HeadlessKWin``). KDE's dialog cannot be answered without an input device, so grants are seeded in the
/// permission store as the portal keeps them, and the restore path is tested: a window's grant is restored with no
/// dialog and its pictures come, in the format KWin offers, a masked region covered; a grant of KWin's virtual output gets no picture at
/// all from KWin 5.27, and screenpub says what to do.
@Suite(.watchdog(), .serialized) struct KWinShareTests {
    static let screenpub = ChildProcess.productsDirectory + "/screenpub"

    /// A headless KWin with the test window, or the test is skipped, saying why, where KWin cannot start.
    func desktop() async throws -> HeadlessKWin {
        let kwin = try await HeadlessDesktopFailure.startedOrSkipped("KWin") { try await HeadlessKWin() }
        try await kwin.showTestWindow()
        return kwin
    }

    /// screenpub recording through the portal with the grant seeded under `token` for `sources`.
    func share(_ sources: String, token: String, on kwin: HeadlessKWin, seconds: Double, path: String, _ more: [String] = []) throws -> ChildProcess {
        let state = kwin.pipewire.runtimeDirectory + "/state/screenpub"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try (token + "\n").write(toFile: state + "/portal-restore-token" + (sources == "monitor" ? "" : "." + sources), atomically: true, encoding: .utf8)
        return try ChildProcess(
            Self.screenpub,
            ["--backend", "pipewire", "--portal-source", sources, "--output", path, "--duration", String(seconds), "--fps", "10"] + more,
            environment: kwin.environment.filter { !$0.key.hasPrefix("SCREENPUB_") })
    }

    @Test func aWindowsSeededGrantIsRestoredWithoutADialogAndItsPicturesCome() async throws {
        let kwin = try await desktop()
        let window = try #require(try await kwin.windowIDs(caption: "screenpub test window").first, "KWin listed no test window")
        let token = UUID().uuidString.lowercased()
        try await kwin.seedGrant(token: token, window: window)
        let path = kwin.pipewire.runtimeDirectory + "/window.webm"
        let outcome = await (try share("window", token: token, on: kwin, seconds: 3, path: path, ["--mask-region", "0,0,160,120"])).wait(timeout: 40)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardError.contains("asking the ScreenCast portal with the grant saved"), "\(outcome.standardError)")
        // What KWin offers over memfd, with no GPU: BGRA.
        #expect(outcome.standardError.contains("\(kwin.width)×\(kwin.height) BGRA"), "\(outcome.standardError)")
        // The window stands still: its first picture comes all the same (KWin repaints a window whose cast starts).
        let looks = try Pictures.measured(path) {
            ($0.width, $0.height, GTKTestWindow.isShown(in: $0), TestPattern.difference($0, x: 80, y: 60, GTKTestWindow.red) <= 40)
        }
        let first = try #require(looks.first, "no picture")
        #expect(first.0 == kwin.width && first.1 == kwin.height && first.2, "\(looks)")
        #expect(looks.allSatisfy { !$0.3 }, "the masked corner is covered in every picture: \(looks)")

        let restored = outcome.standardError.contains("asking the ScreenCast portal with the grant saved") && outcome.status == 0
        try await TestedDesktopsTable.expectRow(
            "KDE Plasma", packages: [("KWin", "kwin-wayland"), ("xdg-desktop-portal-kde", "xdg-desktop-portal-kde")],
            found: [
                "Grant restored with no dialog": restored ? "yes, from a seeded grant" : "no",
                "A still screen's first picture": first.2 ? "yes, of a window" : "no",
                "`--portal-source window`": first.2 ? "yes" : "no",
            ])
    }

    @Test func aVirtualOutputThatSendsNoPictureEndsTheShareWithWhatToDo() async throws {
        let kwin = try await desktop()
        let token = UUID().uuidString.lowercased()
        try await kwin.seedGrant(token: token, window: nil)
        let path = kwin.pipewire.runtimeDirectory + "/output.webm"
        let outcome = await (try share("monitor", token: token, on: kwin, seconds: 10, path: path)).wait(timeout: 40)
        #expect(outcome.status != 0 && outcome.status < 128, "status \(outcome.status): \(outcome.standardError)")
        #expect(outcome.standardError.contains("asking the ScreenCast portal with the grant saved"), "\(outcome.standardError)")
        #expect(
            outcome.standardError.contains("sent no frame within") && outcome.standardError.contains("--portal-source window"),
            "\(outcome.standardError)")
    }
}
