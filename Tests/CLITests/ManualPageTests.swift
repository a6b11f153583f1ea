import Foundation
import ScreenTesting
import Testing

/// The man pages `make deb` installs, made by the manual-page tool from the commands' own descriptions and
/// rendered by man(1): what generate-manual used to break stays whole.
@Suite(.watchdog()) struct ManualPageTests {
    /// `command`'s man page as man(1) renders it, and what lexgrog (mandb's whatis reader) finds in it.
    private func rendered(_ command: String) async throws -> (text: String, whatis: String) {
        let page = FileManager.default.temporaryDirectory.appendingPathComponent("\(command)-\(UUID().uuidString).1").path
        defer { try? FileManager.default.removeItem(atPath: page) }
        let made = try await ChildProcess.run(
            ChildProcess.productsDirectory + "/manual-page", [ChildProcess.productsDirectory + "/" + command, "--date", "2026-11-23"])
        #expect(made.status == 0, "\(made.standardError)")
        #expect(made.standardOutput.hasPrefix(#"'\" -*- coding: UTF-8 -*-"#))
        try made.standardOutput.write(toFile: page, atomically: true, encoding: .utf8)
        let manual = try await ChildProcess.run(
            "/usr/bin/man", ["-l", page], environment: ["MANWIDTH": "250", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"])
        #expect(manual.status == 0 && manual.standardError.isEmpty, "\(manual.standardError)")
        let whatis = try await ChildProcess.run("/usr/bin/lexgrog", [page])
        // Justified lines have runs of spaces: one is enough to compare text.
        let text = manual.standardOutput.replacing(/\ {2,}/, with: " ")
        return (text, whatis.standardOutput)
    }

    @Test func screenpubsPageKeepsItsTextAndDescribesInvertedFlagsOnce() async throws {
        let page = try await rendered("screenpub")
        #expect(page.whatis.contains("\"screenpub - Share a Linux screen"), "\(page.whatis)")
        for text in ["AV1 7–10 (default 10), VP9 5–9 (default 8)", "--cursor, --no-cursor", "Draw the pointer into the frames (--no-cursor: leave it out; on Wayland, ask the portal for a stream without it). (default: --cursor)",
            "--fps fps", "(default: 5.0)", "screenpub {status|pause|resume|mute|unmute|stop|mask}", "screenpub --list-monitors", "EXAMPLES",
            "SEE ALSO", "/usr/share/doc/screenpub/README.md.gz", "screenpub status [options]", "±"]
        {
            #expect(page.text.contains(text), "the page says \(text)")
        }
        #expect(!page.text.contains("screenpub help"), "no help subcommand")
        #expect(!page.text.contains("\n --no-cursor\n"), "--no-cursor has no entry of its own saying that it draws the pointer")
        #expect(!page.text.contains("--experimental-dump-help") && !page.text.contains("--help-hidden"))
    }

    @Test func screenrelaysPageHasItsAdminCommandsAndNoPlaceholderSynopsis() async throws {
        let page = try await rendered("screenrelay")
        #expect(page.whatis.contains("\"screenrelay - "), "\(page.whatis)")
        for text in ["screenrelay {session|sessions|token|archive}", "screenrelay archive download", "screenrelay token 3f0c… --name Ada",
            "--publisher-signals, --no-publisher-signals", "EXAMPLES", "(default: 8090)"]
        {
            #expect(page.text.contains(text), "the page says \(text)")
        }
        #expect(!page.text.contains("subcommand"), "no placeholder synopsis")
        #expect(!page.text.contains("screenrelay help"))
    }

    @Test func screensubsPageSaysWhatItDecodes() async throws {
        let page = try await rendered("screensub")
        #expect(page.whatis.contains("\"screensub - Read a screenpub stream back"), "\(page.whatis)")
        #expect(page.text.contains("decoded with libaom, libvpx or openh264") && page.text.contains("EXAMPLES"))
    }
}
