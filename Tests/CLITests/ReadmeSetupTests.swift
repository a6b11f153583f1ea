import Foundation
import ScreenTesting
import Testing

/// The README's commands that set screenpub up: the two commands, the package, the install from source, and
/// the systemd user service. Where one cannot run inside this test run, the test says why and checks the
/// nearest real thing.
@Suite(.watchdog()) struct ReadmeSetupTests {
    static let repository = ReadmeExamples.repository.path
    static var debPath: String { repository + "/out/screenpub_0.1.0_amd64.deb" }

    /// `make -n TARGET`: what make would run.
    static func recipe(_ shell: ReadmeShell, _ command: String) async throws -> String {
        let text = shell.command(command)
        let outcome = try await ChildProcess.run("/usr/bin/make", ["-n", "-C", repository] + text.split(separator: " ").dropFirst().map(String.init))
        #expect(outcome.status == 0, "\(command): \(outcome.standardError)")
        return outcome.standardOutput
    }

    @Test func build() async throws {
        let shell = try ReadmeShell(.build)
        shell.directory = Self.repository

        // `make demo` shares a virtual display (there is none here) to its embedded relay and prints the viewer
        // link; it runs with the binaries this test run built instead of building them again (SwiftPM's lock is
        // held by the test run).
        let port = try freeLoopbackPort()
        shell.environment.merge(["SCREENPUB_BIN_DIR": ChildProcess.productsDirectory, "PORT": String(port), "DURATION": "30", "SCREENPUB_CONTROL_SOCKET": ""]) { $1 }
        shell.environment["DISPLAY"] = nil
        let demo = try shell.start("make demo")
        let viewer = try #require(try await shell.printed(demo, "viewer:", timeout: 60), "\(demo.outputSoFar) \(demo.errorsSoFar)")
        #expect(viewer.hasPrefix("http://127.0.0.1:\(port)/view/"), "\(viewer)")
        let watcher = try await ChildProcess.run(
            RunningShare.screensub, ["--server", "http://127.0.0.1:\(port)", "--token", String(viewer.split(separator: "token=").last ?? ""), "--count", "3"], timeout: 60)
        #expect(watcher.status == 0 && watcher.standardOutput.contains("1920×1080"), "\(watcher.standardOutput) \(watcher.standardError)")
        demo.signal(SIGINT)
        _ = await demo.wait(timeout: 20)

        // `make test` is this very run (CI runs exactly it); `make bench` runs for many minutes: their recipes,
        // and every benchmark script it names exists and parses.
        #expect(try await Self.recipe(shell, "make test").contains("test --skip-build"))
        let bench = try await Self.recipe(shell, "make bench")
        let scripts = bench.split(separator: "\n").map(String.init).filter { $0.hasPrefix("Benchmarks/") }
        #expect(scripts.count >= 5, "\(bench)")
        for script in scripts {
            let checked = try await ChildProcess.run("/bin/bash", ["-n", Self.repository + "/" + script])
            #expect(checked.status == 0, "\(script): \(checked.standardError)")
        }
        #expect(try await Self.recipe(shell, "make release").contains("scripts/release-build.sh"))

        // The package `make test` built before the tests (as `make deb` does), installable as the README says:
        // apt resolves its dependencies (simulated: this machine's own packages are not replaced).
        #expect(try await Self.recipe(shell, "make deb").contains("packaging/deb/build.sh"))
        let version = try await ChildProcess.run(RunningShare.screenpub, ["--version"])
        #expect(version.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "0.1.0", "the README names the package by version 0.1.0")
        if FileManager.default.fileExists(atPath: Self.debPath) {
            shell.substitutions = [("sudo apt install", "apt-get install --simulate")]
            let install = try await shell.run("sudo apt install ./out/screenpub_0.1.0_amd64.deb", timeout: 120)
            #expect(install.status == 0 && install.standardOutput.contains("Inst screenpub"), "\(install.standardOutput) \(install.standardError)")
        } else {
            _ = shell.command("sudo apt install ./out/screenpub_0.1.0_amd64.deb")
            Issue.record("\(Self.debPath) was not built: run the tests with `make test`, which builds the package first")
        }

        // From source: installed into a prefix of the test's own instead of /usr/local.
        let release = Self.repository + "/.build/release"
        let built = FileManager.default.isExecutableFile(atPath: release + "/screenpub") ? ".build/release/" : ChildProcess.productsDirectory + "/"
        let prefix = shell.path("usr/local")
        try FileManager.default.createDirectory(atPath: prefix + "/bin", withIntermediateDirectories: true)
        shell.substitutions = [(".build/release/", built), ("/usr/local", prefix)]
        for command in [
            "install -m755 .build/release/screenpub .build/release/screensub .build/release/screenrelay /usr/local/bin/", "install -d /usr/local/share/screenpub/viewer",
            "install -m644 Sources/ScreenRelay/Viewer/* /usr/local/share/screenpub/viewer/",
        ] {
            let outcome = try await shell.run(command)
            #expect(outcome.status == 0, "\(command): \(outcome.standardError)")
        }
        for program in ["screenpub", "screensub", "screenrelay"] {
            let ran = try await ChildProcess.run(prefix + "/bin/" + program, ["--version"])
            #expect(ran.status == 0 && ran.standardOutput.hasPrefix("0.1.0"), "\(program): \(ran.standardError)")
        }
        let viewerFiles = try FileManager.default.contentsOfDirectory(atPath: Self.repository + "/Sources/ScreenRelay/Viewer").sorted()
        #expect(try FileManager.default.contentsOfDirectory(atPath: prefix + "/share/screenpub/viewer").sorted() == viewerFiles)
        shell.expectAllRun()
    }

    /// A systemd user manager cannot run here (systemd is not PID 1 in this container): `systemctl --user` and
    /// `journalctl --user` answer that they cannot reach it, and the test does what the manager would do with
    /// the shipped unit: its ExecStart with the copied configuration and the imported DISPLAY, its ExecReload
    /// after an edit, and its log lines as journald would keep them.
    @Test func service() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let port = try freeLoopbackPort()
        let shell = try ReadmeShell(.service, display: display, environment: ["SCREENRELAY_SECRET": ReadmeRelayTests.secret])
        // The example the package ships, from the package when it was built, else from the source tree it is taken from.
        var examples = Self.repository + "/packaging/examples/"
        if FileManager.default.fileExists(atPath: Self.debPath) {
            let extracted = try await ChildProcess.run("/usr/bin/dpkg-deb", ["-x", Self.debPath, shell.path("package")])
            #expect(extracted.status == 0, "\(extracted.standardError)")
            examples = shell.path("package/usr/share/doc/screenpub/examples/")
        }
        shell.substitutions = [("/usr/share/doc/screenpub/examples/", examples)]
        #expect(try await shell.run("mkdir -p ~/.config/screenpub").status == 0)
        #expect(try await shell.run("cp /usr/share/doc/screenpub/examples/screenpub.toml ~/.config/screenpub/config.toml").status == 0)
        let config = shell.path(".config/screenpub/config.toml")
        let shipped = try String(contentsOfFile: config, encoding: .utf8)
        // "then edit: server, token, fps…"
        let relay = try await ReadmeRelayTests.relay(shell, port: port)
        let created = try await ChildProcess.run(RunningRelayProcess.screenrelay, ["session", "create", "--server", "http://127.0.0.1:\(port)", "--json"], environment: shell.environment)
        let session = ReadmeRelayTests.object(created.standardOutput)
        let token = try #require(session["token"] as? String, "\(created.standardOutput) \(created.standardError)")
        try (shipped + "\nserver = \"http://127.0.0.1:\(port)\"\ntoken = \"\(token)\"\n").write(toFile: config, atomically: true, encoding: .utf8)

        let unitFile = Self.repository + "/packaging/systemd/screenpub.service"
        let unit = try String(contentsOfFile: unitFile, encoding: .utf8)
        let execStart = try #require(unit.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        #expect(execStart == "ExecStart=/usr/bin/screenpub $SCREENPUB_ARGS", "the unit runs: \(execStart)")
        #expect(unit.contains("ExecReload=/bin/kill -HUP $MAINPID"))
        // Installed as the README says for an install from source (the package puts it in /usr/lib/systemd/user).
        try FileManager.default.createDirectory(atPath: shell.path(".config/systemd/user"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: unitFile, toPath: shell.path(".config/systemd/user/screenpub.service"))
        let imported = try await shell.run("systemctl --user import-environment DISPLAY XAUTHORITY")
        #expect(imported.status != 0, "a user manager answered: \(imported.standardOutput)")
        // Enabling works on the files alone (a link into graphical-session.target.wants); starting needs the manager.
        let enabled = try await shell.run("systemctl --user enable --now screenpub.service")
        #expect(enabled.status != 0, "a user manager answered: \(enabled.standardOutput)")
        #expect(FileManager.default.fileExists(atPath: shell.path(".config/systemd/user/graphical-session.target.wants/screenpub.service")), "\(enabled.standardError)")
        // What the manager would start: /usr/bin/screenpub (the one built here) with no arguments, the session's DISPLAY.
        let service = try ChildProcess(RunningShare.screenpub, [], environment: shell.environment)
        defer { service.signal(SIGKILL) }
        #expect(try await eventually(20) { service.errorsSoFar.contains("publishing") || service.errorsSoFar.contains("published") }, "\(service.errorsSoFar)")
        let journal = try await shell.run("journalctl --user -u screenpub -f", timeout: 10)
        #expect(journal.status != 0, "journalctl answered: \(journal.standardOutput)")
        // journald keeps standard error's lines as they are: plain text, no terminal escapes.
        #expect(!service.errorsSoFar.contains("\u{1B}") && service.errorsSoFar.split(separator: "\n").allSatisfy { !$0.isEmpty }, "\(service.errorsSoFar)")

        try (shipped.replacingOccurrences(of: "fps = 5 ", with: "fps = 10") + "\nserver = \"http://127.0.0.1:\(port)\"\ntoken = \"\(token)\"\n")
            .write(toFile: config, atomically: true, encoding: .utf8)
        let reload = try await shell.run("systemctl --user reload screenpub")
        #expect(reload.status != 0, "\(reload.standardError)")
        let execReload = try await ChildProcess.run("/bin/bash", ["-c", "/bin/kill -HUP $MAINPID"], environment: ["MAINPID": String(service.processID)])
        #expect(execReload.status == 0)
        #expect(try await eventually(20) { service.errorsSoFar.contains("SIGHUP: restarting the capture with the new settings (10.0 fps") }, "\(service.errorsSoFar)")
        withExtendedLifetime(relay) {}  // the relay serves the share until here
        shell.expectAllRun()
    }
}
