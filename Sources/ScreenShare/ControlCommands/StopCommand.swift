public import ArgumentParser
import ScreenService

/// `screenpub stop`: ends a running share cleanly and waits for it.
public struct StopCommand: AsyncParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "End the share cleanly (viewers are told the stream ended; a recording is finished) and wait for it.")

    @OptionGroup var control: ControlOptions

    @Option(help: "Seconds to wait for screenpub to exit.")
    var timeout: Double = 15

    public func run() async throws {
        _ = try await control.send("stop")
        guard let path = ShareControlClient.socketPath(control.controlSocket),
            await ControlSocket.waitUntilGone(path, timeout: .milliseconds(Int(timeout * 1000))) else {
            throw CommandFailure(ExitStatus.runtimeFailure, "still running after \(timeout) s")
        }
        printNow("screenpub stopped")
    }
}
