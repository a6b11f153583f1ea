public import ArgumentParser
import ScreenService

// `screenpub pause|resume|mute|unmute`: one word to a running share, one line back.

/// A control command that sends one word and prints one line.
public protocol OneWordControlCommand: AsyncParsableCommand {
    var control: ControlOptions { get }
    /// What it prints when done, from the share's answer.
    static func done(_ status: ShareStatus) -> String
}

extension OneWordControlCommand {
    public func run() async throws {
        let (status, _) = try await control.send(Self.configuration.commandName ?? "")
        printNow(Self.done(status))
    }
}

public struct PauseCommand: OneWordControlCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Stop sending video; viewers are told the share is paused and keep the last picture.")

    @OptionGroup public var control: ControlOptions

    public static func done(_ status: ShareStatus) -> String { "screenpub is \(status.state ?? "paused")" }
}

public struct ResumeCommand: OneWordControlCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "resume", abstract: "Send video again after `screenpub pause`, starting with a keyframe.")

    @OptionGroup public var control: ControlOptions

    public static func done(_ status: ShareStatus) -> String { "screenpub is \(status.state ?? "sharing")" }
}

public struct MuteCommand: OneWordControlCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "mute",
        abstract: "Stop sending sound (a share started with --audio); the picture goes on and viewers see that it is muted.",
        discussion: "Exit status: 0 muted; 3 no screenpub is running; 1 it has no sound to mute.")

    @OptionGroup public var control: ControlOptions

    public static func done(_ status: ShareStatus) -> String { "screenpub's sound is muted" }
}

public struct UnmuteCommand: OneWordControlCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "unmute", abstract: "Send sound again after `screenpub mute`.",
        discussion: "Exit status: 0 unmuted; 3 no screenpub is running; 1 it has no sound.")

    @OptionGroup public var control: ControlOptions

    public static func done(_ status: ShareStatus) -> String { "screenpub's sound is on" }
}
