public import ArgumentParser
import ScreenService

/// `screenpub status`: what a running share is doing.
public struct StatusCommand: AsyncParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the running share: state, session, viewers, frame rate and bit rate.",
        discussion: "Exit status: 0 running; 3 no screenpub is running; 1 it answered with an error.")

    @OptionGroup var control: ControlOptions

    @Flag(help: "Print the status as one JSON object (fields in docs/protocol.md).")
    var json = false

    public func run() async throws {
        let (status, data) = try await control.send("status")
        if json {
            printNow(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        } else {
            printNow(status.description)
        }
    }
}
