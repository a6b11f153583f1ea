import ArgumentParser
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
    static func main() async {
        await CommandEntry.run(
            ScreenpubCommand.self, primary: ShareCommand.self,
            otherCommands: ["status", "pause", "resume", "mute", "unmute", "stop", "mask", "help"],
            arguments: Array(CommandLine.arguments.dropFirst()))
    }

    /// The share command as the configuration file, the environment and the command line give it now: what the
    /// share's settings are read from again on SIGHUP.
    static func readShareCommand() throws -> ShareCommand {
        try CommandEntry.readPrimary(
            ShareCommand.self, of: ScreenpubCommand.self,
            commandLine: CommandEntry.primaryCommandLine(Array(CommandLine.arguments.dropFirst()), primary: ShareCommand.self))
    }
}
