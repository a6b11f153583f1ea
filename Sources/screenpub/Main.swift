import ArgumentParser
import Foundation
import ScreenService
import ScreenShare
import ScreenWire

/// `screenpub`: the share (default) and the commands that control a running one.
struct ScreenpubCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "screenpub",
        abstract: "Share a Linux screen as a low-frame-rate, damage-driven AV1/VP9 screen stream.",
        discussion: """
            `screenpub [options]` shares the screen (the `share` command; `screenpub share --help` lists its \
            options). The other commands talk to a running screenpub over its control socket.
            """,
        version: ScreenpubVersion.current,
        subcommands: [
            ShareCommand.self, StatusCommand.self, PauseCommand.self, ResumeCommand.self, MuteCommand.self, UnmuteCommand.self,
            StopCommand.self, MaskCommand.self,
        ],
        defaultSubcommand: ShareCommand.self)
}

@main
enum ScreenpubMain {
    /// The command line after the program name, without a leading `share`: what the share's settings are read
    /// from again on SIGHUP.
    static let shareCommandLine: [String] = {
        let arguments = LayeredArguments.attachingNegativeNumbers(Array(CommandLine.arguments.dropFirst()))
        return arguments.first == "share" ? Array(arguments.dropFirst()) : arguments
    }()

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments == ["--help"] || arguments == ["-h"] {
            // What people run most is sharing: show its options, then the other commands.
            let commands = ScreenpubCommand.helpMessage()
            printNow(ScreenpubCommand.helpMessage(for: ShareCommand.self) + "\n"
                + (commands.range(of: "SUBCOMMANDS:").map { String(commands[$0.lowerBound...]) } ?? commands))
            return
        }
        // Help, versions, completions and the control commands read no settings.
        let controlCommands = ["status", "pause", "resume", "mute", "unmute", "stop", "mask", "help"]
        let informational: Set<String> = ["-h", "--help", "--help-hidden", "--version", "--experimental-dump-help"]
        if let first = arguments.first, controlCommands.contains(first)
            || arguments.contains(where: { informational.contains($0) || $0.hasPrefix("--generate-completion-script") })
        {
            await ScreenpubCommand.main(arguments)
            return
        }
        var command: ShareCommand
        do {
            command = try parseShareCommand(commandLine: shareCommandLine)
        } catch let error as ServiceError where error.kind == .badConfiguration {
            FileHandle.standardError.write(Data("screenpub: \(error)\n".utf8))
            exit(ExitStatus.badConfiguration)
        } catch {
            ScreenpubCommand.exit(withError: error)
        }
        do {
            try await command.run()
        } catch {
            ScreenpubCommand.exit(withError: error)
        }
    }

    /// The share command from the configuration file, the environment and `commandLine` (see
    /// ``LayeredArguments/parse(_:as:of:application:commandLine:)``).
    static func parseShareCommand(commandLine: [String]) throws -> ShareCommand {
        try LayeredArguments.parse(ShareCommand.self, as: "share", of: ScreenpubCommand.self, application: "screenpub", commandLine: commandLine)
    }
}

// MARK: Control commands

/// Where the control commands find a running screenpub.
struct ControlOptions: ParsableArguments {
    @Option(help: "The running screenpub's control socket (default: $XDG_RUNTIME_DIR/screenpub.sock).")
    var controlSocket: String?

    /// Sends `command` and returns the decoded reply; exits 3 when no screenpub answers, 1 when it refuses.
    func send(_ command: String) async throws -> (status: ShareStatus, json: Data) {
        do throws(ShareControlClient.Failure) {
            return try await ShareControlClient.send(command, toSocket: controlSocket)
        } catch {
            FileHandle.standardError.write(Data("screenpub: \(error)\n".utf8))
            throw ExitCode(error.exitStatus)
        }
    }
}

/// A control command that sends one word and prints one line.
protocol OneWordControlCommand: AsyncParsableCommand {
    var control: ControlOptions { get }
    /// What it prints when done, from the share's answer.
    static func done(_ status: ShareStatus) -> String
}

extension OneWordControlCommand {
    func run() async throws {
        let (status, _) = try await control.send(Self.configuration.commandName ?? "")
        printNow(Self.done(status))
    }
}

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the running share: state, session, viewers, frame rate and bit rate.",
        discussion: "Exit status: 0 running; 3 no screenpub is running; 1 it answered with an error.")

    @OptionGroup var control: ControlOptions

    @Flag(help: "Print the status as one JSON object (fields in docs/protocol.md).")
    var json = false

    func run() async throws {
        let (status, data) = try await control.send("status")
        if json {
            printNow(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        } else {
            printNow(status.description)
        }
    }
}

struct PauseCommand: OneWordControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Stop sending video; viewers are told the share is paused and keep the last picture.")

    @OptionGroup var control: ControlOptions

    static func done(_ status: ShareStatus) -> String { "screenpub is \(status.state ?? "paused")" }
}

struct ResumeCommand: OneWordControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume", abstract: "Send video again after `screenpub pause`, starting with a keyframe.")

    @OptionGroup var control: ControlOptions

    static func done(_ status: ShareStatus) -> String { "screenpub is \(status.state ?? "sharing")" }
}

struct MuteCommand: OneWordControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "mute",
        abstract: "Stop sending sound (a share started with --audio); the picture goes on and viewers see that it is muted.",
        discussion: "Exit status: 0 muted; 3 no screenpub is running; 1 it has no sound to mute.")

    @OptionGroup var control: ControlOptions

    static func done(_ status: ShareStatus) -> String { "screenpub's sound is muted" }
}

struct UnmuteCommand: OneWordControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "unmute", abstract: "Send sound again after `screenpub mute`.",
        discussion: "Exit status: 0 unmuted; 3 no screenpub is running; 1 it has no sound.")

    @OptionGroup var control: ControlOptions

    static func done(_ status: ShareStatus) -> String { "screenpub's sound is on" }
}

struct MaskCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mask",
        abstract: "Hide windows matching a pattern, or a rectangle, from now on (add), or show them again (remove), in a running share.",
        discussion: """
            A pattern is matched as --mask-window matches it: a glob against WM_CLASS and title, ignoring case (X11 \
            only: a share that captures through PipeWire refuses window patterns, as its screen cast names no \
            windows). --region X,Y,W,H is a rectangle of the captured area, on X11 and PipeWire alike. The capture \
            restarts with the change at once; the stream goes on. `screenpub status` lists the masks. A change lasts \
            until screenpub stops: to keep it, put it in the config file (mask-window = [...], mask-region = [...]); \
            a SIGHUP reload that would show something hidden now is refused.

            Exit status: 0 done; 3 no screenpub is running; 1 it refused (the reason is printed).

            Examples:
              screenpub mask add KeePassXC                 # hide the password manager's windows
              screenpub mask add --region 1600,0,320,60    # and the corner where notifications appear
              screenpub mask remove KeePassXC              # show its windows again
            """)

    @Argument(help: "add or remove.")
    var action: Action

    @Argument(help: "A glob matched against windows' WM_CLASS and titles, ignoring case (quote it in a shell).")
    var pattern: String?

    @Option(help: ArgumentHelp("The same as PATTERN.", valueName: "PATTERN"))
    var window: String?

    @Option(help: ArgumentHelp("A rectangle of the captured area instead of windows.", valueName: "X,Y,W,H"))
    var region: String?

    @OptionGroup var control: ControlOptions

    enum Action: String, ExpressibleByArgument, CaseIterable { case add, remove }

    func validate() throws {
        guard [pattern, window, region].compactMap({ $0 }).count == 1 else {
            throw ValidationError("give one of PATTERN, --window PATTERN or --region X,Y,W,H")
        }
    }

    func run() async throws {
        let target = region.map { "--region \($0)" } ?? (pattern ?? window).map { "--window \($0)" } ?? ""
        let (status, _) = try await control.send("mask \(action.rawValue) \(target)")
        let windows = status.maskWindows ?? [], regions = status.maskRegions ?? []
        printNow("window masks: \(windows.isEmpty ? "none" : windows.joined(separator: ", ")); regions: \(regions.isEmpty ? "none" : regions.joined(separator: "; "))")
    }
}

struct StopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "End the share cleanly (viewers are told the stream ended; a recording is finished) and wait for it.")

    @OptionGroup var control: ControlOptions

    @Option(help: "Seconds to wait for screenpub to exit.")
    var timeout: Double = 15

    func run() async throws {
        _ = try await control.send("stop")
        guard let path = ShareControlClient.socketPath(control.controlSocket),
            await ControlSocket.waitUntilGone(path, timeout: .milliseconds(Int(timeout * 1000))) else {
            FileHandle.standardError.write(Data("screenpub: still running after \(timeout) s\n".utf8))
            throw ExitCode(ExitStatus.runtimeFailure)
        }
        printNow("screenpub stopped")
    }
}
