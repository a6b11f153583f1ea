import Foundation
import ScreenCodec
import ScreenMedia
import ScreenRecording
import ScreenTesting
import Testing

/// Picking what to share by name: `--list-windows`, `--list-monitors`, `--window PATTERN`, `--monitor NAME`.
@Suite(.watchdog()) struct TargetPickingTests {
    let screenpub = ChildProcess.productsDirectory + "/screenpub"
    static let red = (r: UInt8(255), g: UInt8(0), b: UInt8(0))
    static let green = (r: UInt8(0), g: UInt8(200), b: UInt8(0))

    private func temporaryPath(_ name: String) -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("screenpub-targets-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent(name).path
    }

    /// The pictures of a recording, decoded.
    private func pictures(_ path: String) throws -> [(width: Int, height: Int, red: Bool, green: Bool)] {
        let reader = try WebMReader(path: path)
        let decoder = try makeVideoDecoder(for: reader.codec)
        var seen: [(Int, Int, Bool, Bool)] = []
        for frame in try reader.readAll() {
            try frame.payload.withUnsafeBytes { bytes in
                try decoder.decode(bytes) { picture in
                    seen.append((picture.width, picture.height, TestPattern.shows(picture, Self.red), TestPattern.shows(picture, Self.green)))
                }
            }
        }
        return seen
    }

    @Test func windowsAreListedAndOneIsSharedByAGlobOnItsTitle() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        let docs = painter.createApplicationWindow(
            PixelRect(x: 10, y: 20, width: 120, height: 100), color: XPainter.pixel(red: 255, green: 0, blue: 0),
            instance: "Navigator", class: "Firefox", title: "Release notes — Mozilla Firefox")
        let terminal = painter.createApplicationWindow(
            PixelRect(x: 170, y: 30, width: 100, height: 80), color: XPainter.pixel(red: 0, green: 200, blue: 0),
            instance: "xterm", class: "XTerm", title: "ada@desk: ~")

        let table = try await ChildProcess.run(screenpub, ["--display", display.name, "--list-windows"])
        #expect(table.status == 0, "\(table.standardError)")
        let lines = table.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("ID") == true && lines.first?.contains("TITLE") == true, "\(table.standardOutput)")
        // Top of the stack first: the terminal was mapped last.
        #expect(lines.dropFirst().first?.hasPrefix("0x" + String(terminal, radix: 16)) == true, "\(table.standardOutput)")
        #expect(table.standardOutput.contains("Firefox") && table.standardOutput.contains("120x100+10+20"), "\(table.standardOutput)")
        #expect(table.standardOutput.contains("Release notes — Mozilla Firefox"), "\(table.standardOutput)")

        let json = try await ChildProcess.run(screenpub, ["--display", display.name, "--list-windows", "--json"])
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [[String: Any]])
        let firefox = try #require(listed.first { $0["className"] as? String == "Firefox" })
        #expect(firefox["id"] as? UInt == docs)
        #expect([firefox["x"], firefox["y"], firefox["width"], firefox["height"]].map { $0 as? Int } == [10, 20, 120, 100])
        #expect(firefox["instance"] as? String == "Navigator")

        // A glob on the title, ignoring case: only that window, at its size.
        let path = temporaryPath("docs.webm")
        let shared = try await ChildProcess.run(
            screenpub, ["--display", display.name, "--window", "*release NOTES*", "--output", path, "--duration", "1", "--no-cursor"])
        #expect(shared.status == 0, "\(shared.standardError)")
        #expect(shared.standardError.contains("is window 0x" + String(docs, radix: 16)), "\(shared.standardError)")
        let seen = try pictures(path)
        #expect(!seen.isEmpty && seen.allSatisfy { $0.width == 120 && $0.height == 100 && $0.red && !$0.green })

        // A pattern for both: the list, and the command line has to change (64); one for none: cannot start (2).
        let ambiguous = try await ChildProcess.run(screenpub, ["--display", display.name, "--window", "*x*", "--output", temporaryPath("a.webm")])
        #expect(ambiguous.status == 64, "\(ambiguous.standardError)")
        #expect(ambiguous.standardError.contains("2 windows match \"*x*\""), "\(ambiguous.standardError)")
        #expect(ambiguous.standardError.contains("0x" + String(docs, radix: 16)) && ambiguous.standardError.contains("0x" + String(terminal, radix: 16)))
        let none = try await ChildProcess.run(screenpub, ["--display", display.name, "--window", "*calendar*", "--output", temporaryPath("n.webm")])
        #expect(none.status == 2, "\(none.standardError)")
        #expect(none.standardError.contains("no window on \(display.name) has a class or title matching \"*calendar*\""), "\(none.standardError)")
        #expect(none.standardError.contains("--list-windows"))
    }

    @Test func monitorsAreListedAndOneIsSharedByItsName() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        painter.createWindow(PixelRect(x: 0, y: 0, width: 160, height: 240), color: XPainter.pixel(red: 255, green: 0, blue: 0))
        painter.createWindow(PixelRect(x: 160, y: 0, width: 160, height: 240), color: XPainter.pixel(red: 0, green: 200, blue: 0))
        for (name, geometry) in [("LEFT-1", "160/0x240/0+0+0"), ("RIGHT-1", "160/0x240/0+160+0")] {
            let result = try await ChildProcess.run("/usr/bin/xrandr", ["-d", display.name, "--setmonitor", name, geometry, "none"])
            #expect(result.status == 0, "\(result.standardError)")
        }
        let json = try await ChildProcess.run(screenpub, ["--display", display.name, "--list-monitors", "--json"])
        #expect(json.status == 0, "\(json.standardError)")
        let monitors = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [[String: Any]])
        let right = try #require(monitors.first { $0["name"] as? String == "RIGHT-1" }, "\(json.standardOutput)")
        #expect([right["x"], right["width"], right["height"]].map { $0 as? Int } == [160, 160, 240])
        let table = try await ChildProcess.run(screenpub, ["--display", display.name, "--list-monitors"])
        #expect(table.standardOutput.contains("RIGHT-1") && table.standardOutput.contains("160x240+160+0"), "\(table.standardOutput)")

        let path = temporaryPath("right.webm")
        let shared = try await ChildProcess.run(
            screenpub, ["--display", display.name, "--monitor", "right-1", "--output", path, "--duration", "1", "--no-cursor"])
        #expect(shared.status == 0, "\(shared.standardError)")
        let seen = try pictures(path)
        #expect(!seen.isEmpty && seen.allSatisfy { $0.width == 160 && $0.green && !$0.red })

        let unknown = try await ChildProcess.run(screenpub, ["--display", display.name, "--monitor", "HDMI-9", "--output", temporaryPath("u.webm")])
        #expect(unknown.status == 2, "\(unknown.standardError)")
        #expect(unknown.standardError.contains("there is no monitor \"HDMI-9\"") && unknown.standardError.contains("LEFT-1"), "\(unknown.standardError)")
    }

    @Test func onWaylandTheListsPointToThePortal() async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = nil
        environment["WAYLAND_DISPLAY"] = "wayland-0"
        for option in ["--list-windows", "--list-monitors"] {
            let result = try await ChildProcess.run(screenpub, [option], environment: environment)
            #expect(result.status == 2, "\(result.standardError)")
            #expect(result.standardError.contains("on Wayland screenpub cannot list"), "\(result.standardError)")
            #expect(result.standardError.contains("portal's dialog"))
        }
    }
}
