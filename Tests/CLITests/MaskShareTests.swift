import Foundation
import ScreenCodec
import ScreenMedia
import ScreenRecording
import ScreenTesting
import Testing

/// `screenpub --mask-window` end to end on Xvfb: what a subscriber of the embedded relay records never shows a
/// matching window; `screenpub status` lists the masks and the windows hidden now; `screenpub mask add|remove`
/// changes them while the share runs.
@Suite(.watchdog()) struct MaskShareTests {
    static let secret = (r: UInt8(255), g: UInt8(0), b: UInt8(255))
    static let notes = (r: UInt8(0), g: UInt8(200), b: UInt8(0))

    @Test func aSubscriberNeverSeesAMaskedWindowAndMasksChangeAtRunTime() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        let share = try await RunningShare(["--display", display.name, "--no-cursor", "--fps", "10", "--mask-window", "*keepass*"])
        let recording = share.home + "/subscriber.webm"
        let subscriber = try ChildProcess(RunningShare.screensub, ["--server", share.server, "--token", share.viewerToken, "--output", recording])
        #expect(try await eventually(20) { FileManager.default.fileExists(atPath: recording) }, "\(subscriber.errorsSoFar)")

        painter.createApplicationWindow(
            PixelRect(x: 20, y: 20, width: 120, height: 100), color: XPainter.pixel(red: 255, green: 0, blue: 255),
            instance: "keepassxc", class: "KeePassXC", title: "Passwords")
        let notes = painter.createApplicationWindow(
            PixelRect(x: 170, y: 30, width: 120, height: 100), color: XPainter.pixel(red: 0, green: 200, blue: 0),
            instance: "gedit", class: "Gedit", title: "Secret plans")
        #expect(try await eventually(20) { (try? await share.status())?["windowsCovered"] as? Int == 1 })
        let status = try await share.status()
        #expect(status["maskWindows"] as? [String] == ["*keepass*"])
        let listed = try await share.control(["status"])
        #expect(listed.standardOutput.contains("masks:   windows *keepass* (1 hidden now), solid"), "\(listed.standardOutput)")

        // At run time: one more pattern hides the notes too; removing one that is not there says which are.
        let added = try await share.control(["mask", "add", "secret*"])
        #expect(added.status == 0 && added.standardOutput.contains("window masks: *keepass*, secret*"), "\(added.standardError)")
        #expect(try await eventually(20) { (try? await share.status())?["windowsCovered"] as? Int == 2 })
        painter.move(window: notes, x: 150, y: 120)
        let missing = try await share.control(["mask", "remove", "nothing"])
        #expect(missing.status == 1 && missing.standardError.contains("no window mask \"nothing\" (masks: *keepass*, secret*)"), "\(missing.standardError)")
        try await Task.sleep(for: .seconds(1))

        share.process.signal(SIGTERM)
        #expect(await share.process.wait(timeout: 20).status == 0)
        _ = await subscriber.wait(timeout: 20)
        let reader = try WebMReader(path: recording)
        let decoder = try makeVideoDecoder(for: reader.codec)
        var seen: [(secret: Bool, notes: Bool)] = []
        for frame in try reader.readAll() {
            try frame.payload.withUnsafeBytes { bytes in
                try decoder.decode(bytes) { picture in seen.append((TestPattern.shows(picture, Self.secret), TestPattern.shows(picture, Self.notes))) }
            }
        }
        #expect(seen.count >= 3)
        #expect(!seen.contains { $0.secret }, "a frame at the subscriber shows the masked window")
        #expect(seen.contains { $0.notes } && seen.last?.notes == false, "the notes show until their mask is added: \(seen.map(\.notes))")
    }
}
