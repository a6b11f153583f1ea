import ArgumentParser
import ScreenService
import Testing

/// What the commands' entry reads the primary command's settings from.
struct CommandEntryTests {
    struct Serve: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "serve")
        @Option var port = 1
    }

    @Test func thePrimaryCommandsNameIsLeftOutAndNegativeNumbersAttached() {
        #expect(CommandEntry.primaryCommandLine(["serve", "--port", "-3"], primary: Serve.self) == ["--port=-3"])
        #expect(CommandEntry.primaryCommandLine(["--port", "7"], primary: Serve.self) == ["--port", "7"])
        // Only a leading name is the command's.
        #expect(CommandEntry.primaryCommandLine(["--title", "serve"], primary: Serve.self) == ["--title", "serve"])
    }

    @Test func aFailureIsItsSentence() {
        let failure = CommandFailure(ExitStatus.cannotStart, "no display")
        #expect(failure.kind == 2 && "\(failure)" == "no display")
    }
}
