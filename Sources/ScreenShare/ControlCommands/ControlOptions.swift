public import ArgumentParser
import Foundation
import ScreenService

/// Where the control commands find a running screenpub.
public struct ControlOptions: ParsableArguments {
    @Option(help: "The running screenpub's control socket (default: $XDG_RUNTIME_DIR/screenpub.sock).")
    var controlSocket: String?

    public init() {}

    /// Sends `command` and returns the decoded reply; exits 3 when no screenpub answers, 1 when it refuses.
    func send(_ command: String) async throws(CommandFailure) -> (status: ShareStatus, json: Data) {
        do throws(ShareControlClient.Failure) {
            return try await ShareControlClient.send(command, toSocket: controlSocket)
        } catch {
            throw CommandFailure(error.exitStatus, "\(error)")
        }
    }
}

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
