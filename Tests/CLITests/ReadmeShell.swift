import Foundation
import ScreenTesting
import Testing

/// The README's shell examples, read from its ```sh blocks: one command an entry, continued lines joined, comments
/// and blank lines dropped. What its other blocks show (output, configuration) is not a command.
enum ReadmeExamples {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let readme = repository.appendingPathComponent("README.md").path

    static let commands: [String] = parse((try? String(contentsOfFile: readme, encoding: .utf8)) ?? "")

    static func parse(_ text: String) -> [String] {
        var commands: [String] = [], pending = "", inShellBlock = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("```") {
                inShellBlock = !inShellBlock && line.trimmingCharacters(in: .whitespaces) == "```sh"
                continue
            }
            guard inShellBlock else { continue }
            let code = withoutComment(line).trimmingCharacters(in: .whitespaces)
            guard !code.isEmpty else { continue }
            pending = pending.isEmpty ? code : pending + " " + code
            if pending.hasSuffix("\\") {
                pending = String(pending.dropLast()).trimmingCharacters(in: .whitespaces)
            } else {
                commands.append(pending)
                pending = ""
            }
        }
        return commands
    }

    /// The line up to a `#` that starts a shell comment (after a blank, outside quotes).
    static func withoutComment(_ line: String) -> String {
        var quote: Character?, previous: Character = " ", result = ""
        for character in line {
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "#" && previous.isWhitespace {
                return result
            }
            result.append(character)
            previous = character
        }
        return result
    }
}

/// A shell for one README scenario: a home directory of its own (also the working directory, `$HOME` and the XDG
/// directories), the commands found on `PATH` as the built ones, and the README's commands run as written, with
/// only the `substitutions` a scenario names (placeholders such as `<sessionId>`, a port that is free, the host
/// names of machines that cannot be here). Every command it runs must be in the README and in its scenario.
final class ReadmeShell: @unchecked Sendable {
    // @unchecked: a scenario's test drives it from one task; the background processes it keeps are Sendable.
    let scenario: ReadmeScenario
    let home: String
    var environment: [String: String]
    /// Where commands run (the home directory unless a scenario runs in the repository, as `make` does).
    var directory: String
    /// Text replaced in each command before it runs, in order.
    var substitutions: [(String, String)] = []
    private(set) var ran: Set<String> = []
    private var background: [ChildProcess] = []
    private var inputs: [Int32] = []

    init(_ scenario: ReadmeScenario, display: VirtualDisplay? = nil, environment extra: [String: String] = [:]) throws {
        self.scenario = scenario
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(scenario.rawValue)-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: home + "/runtime", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        (self.home, directory) = (home, home)
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SCREENPUB_") && !$0.key.hasPrefix("SCREENRELAY_") }
        environment["PATH"] = ChildProcess.productsDirectory + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["HOME"] = home
        environment["XDG_RUNTIME_DIR"] = home + "/runtime"
        environment["XDG_CONFIG_HOME"] = home + "/.config"
        environment["XDG_STATE_HOME"] = home + "/.local/state"
        environment["WAYLAND_DISPLAY"] = nil
        environment["DISPLAY"] = display?.name
        self.environment = environment.merging(extra) { $1 }
    }

    deinit {
        for process in background { process.signal(SIGKILL) }
        for input in inputs { close(input) }
        try? FileManager.default.removeItem(atPath: home)
    }

    /// The README's `command` as it will run: checked to be in the README and in this scenario, substituted.
    func command(_ command: String) -> String {
        #expect(ReadmeExamples.commands.contains(command), "the README no longer shows: \(command)")
        #expect(ReadmeScenario.commands[scenario]?.contains(command) == true, "\(scenario) does not list: \(command)")
        ran.insert(command)
        return substitutions.reduce(command) { $0.replacingOccurrences(of: $1.0, with: $1.1) }
    }

    /// The script bash runs: in the home directory, the command itself taking bash's place when it is one program
    /// (so that signals reach it, as they would from a terminal).
    private func script(_ text: String) -> String {
        let compound = text.contains(";") || text.contains("|") || text.contains("&&") || text.hasPrefix("echo ")
        return "cd '\(directory)' && " + (compound ? text : "exec " + text)
    }

    /// Runs the README's `command` to its end.
    func run(_ command: String, timeout: Double = 60) async throws -> ChildProcess.Outcome {
        try await ChildProcess.run("/bin/bash", ["-c", script(self.command(command))], environment: environment, timeout: timeout)
    }

    /// Starts the README's `command` (its trailing `&` dropped) and leaves it running; killed at the end.
    func start(_ command: String, input: String = "/dev/null") throws -> ChildProcess {
        var text = self.command(command)
        if text.hasSuffix("&") { text = String(text.dropLast()).trimmingCharacters(in: .whitespaces) }
        let process = try ChildProcess("/bin/bash", ["-c", script(text)], environment: environment, standardInput: input)
        background.append(process)
        return process
    }

    /// Runs a README line that sets a shell variable (`export NAME=…` or `NAME="…"`) and keeps the variable for
    /// the commands after it, as the reader's shell would.
    func set(_ command: String) async throws {
        let text = self.command(command)
        let assignment = text.hasPrefix("export ") ? String(text.dropFirst(7)) : text
        let name = String(assignment.prefix { $0 != "=" })
        let outcome = try await ChildProcess.run("/bin/bash", ["-c", "\(assignment); printf %s \"$\(name)\""], environment: environment, timeout: 30)
        #expect(outcome.status == 0 && !outcome.standardOutput.isEmpty, "\(command): \(outcome.standardError)")
        environment[name] = outcome.standardOutput
    }

    /// Waits until `process` has printed a line starting with `prefix` and returns the rest of it.
    func printed(_ process: ChildProcess, _ prefix: String, timeout: Double = 30) async throws -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let line = process.outputSoFar.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) {
                return line.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces)
            }
            if process.hasExited { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    /// Every command of this scenario was run (but those another test of the scenario runs).
    func expectAllRunExcept(_ others: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) {
        let missed = (ReadmeScenario.commands[scenario] ?? []).filter { !ran.contains($0) && !others.contains($0) }
        #expect(missed.isEmpty, "\(scenario) did not run: \(missed)", sourceLocation: sourceLocation)
    }

    func expectAllRun(sourceLocation: SourceLocation = #_sourceLocation) { expectAllRunExcept(sourceLocation: sourceLocation) }

    func path(_ name: String) -> String { home + "/" + name }

    /// A terminal's input stand-in: a FIFO in the home directory that never ends (this shell holds it open for
    /// writing until it goes), and the descriptor that writes into it.
    func openInput(_ name: String = "input") throws -> (path: String, writer: Int32) {
        let fifo = path(name)
        guard mkfifo(fifo, 0o600) == 0 else { throw RunningRelayProcess.Failure(description: "mkfifo \(fifo): errno \(errno)") }
        let writer = open(fifo, O_RDWR | O_CLOEXEC)
        guard writer >= 0 else { throw RunningRelayProcess.Failure(description: "open \(fifo): errno \(errno)") }
        inputs.append(writer)
        return (fifo, writer)
    }

    /// Types `line` into an input from ``openInput(_:)``.
    func type(_ line: String, into writer: Int32) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBufferPointer { write(writer, $0.baseAddress, $0.count) }
    }
}
