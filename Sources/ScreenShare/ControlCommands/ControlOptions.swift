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
