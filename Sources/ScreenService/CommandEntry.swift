public import ArgumentParser
import Foundation
public import ScreenMedia

/// A command's failure as its user sees it: one sentence on standard error after the command's name
/// (`screensub: …`), and its exit status (``ExitStatus``) as its kind.
public typealias CommandFailure = ScreenError<Int32>

/// How screenpub, screenrelay and screensub start, so that the three say help, failures and exit statuses alike.
public enum CommandEntry {
    /// Help, versions, completion scripts and ArgumentParser's dump: they read no settings.
    static let informational: Set<String> = ["-h", "--help", "--help-hidden", "--version", "--experimental-dump-help"]

    /// Parses `arguments` as `root` and runs the command they name. A ``CommandFailure`` is said as
    /// `NAME: message` and exits with its status; other errors (usage, `--help`, ``ExitCode``) as ArgumentParser
    /// says them.
    public static func run<Root: AsyncParsableCommand>(_ root: Root.Type, arguments: [String]) async {
        do {
            var command = try await Root.asyncParseAsRoot(arguments)
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch {
            exit(root, error)
        }
    }

    /// The entry of a command whose everyday use is one subcommand, `primary` (the share, the server): `NAME
    /// [options]` runs it with its settings layered from NAME's file and NAME_* variables (``LayeredArguments``),
    /// and `NAME --help` shows its options, then the other commands. `otherCommands` (and help, versions,
    /// completion scripts) are parsed from `arguments` as they are and read no settings. A file or variable that
    /// cannot be used exits ``ExitStatus/badConfiguration`` with the sentence that says where.
    public static func run<Root: AsyncParsableCommand, Primary: AsyncParsableCommand>(
        _ root: Root.Type, primary: Primary.Type, otherCommands: Set<String>, arguments: [String]
    ) async {
        if arguments == ["--help"] || arguments == ["-h"] {
            // What people run most is the primary command: its options, then the others.
            let commands = Root.helpMessage()
            write(Root.helpMessage(for: Primary.self) + "\n"
                + (commands.range(of: "SUBCOMMANDS:").map { String(commands[$0.lowerBound...]) } ?? commands) + "\n", to: .standardOutput)
            return
        }
        if let first = arguments.first, otherCommands.contains(first)
            || arguments.contains(where: { informational.contains($0) || $0.hasPrefix("--generate-completion-script") })
        {
            await run(root, arguments: arguments)
            return
        }
        var command: Primary
        do {
            command = try readPrimary(primary, of: root, commandLine: primaryCommandLine(arguments, primary: primary))
        } catch let error as ServiceError where error.kind == .badConfiguration {
            write("\(name(of: root)): \(error)\n", to: .standardError)
            Foundation.exit(ExitStatus.badConfiguration)
        } catch {
            exit(root, error)
        }
        do {
            try await command.run()
        } catch {
            exit(root, error)
        }
    }

    /// `arguments` without a leading `primary` command name, negative numbers attached to their options: what
    /// the primary command's settings are read from (at start, and again on SIGHUP).
    public static func primaryCommandLine(_ arguments: [String], primary: any ParsableCommand.Type) -> [String] {
        let attached = LayeredArguments.attachingNegativeNumbers(arguments)
        return attached.first == primary.configuration.commandName ? Array(attached.dropFirst()) : attached
    }

    /// `primary` from its application's configuration file, environment and `commandLine` (see
    /// ``LayeredArguments/parse(_:as:of:application:commandLine:)``).
    public static func readPrimary<Primary: ParsableCommand>(
        _ primary: Primary.Type, of root: any ParsableCommand.Type, commandLine: [String]
    ) throws -> Primary {
        try LayeredArguments.parse(
            primary, as: primary.configuration.commandName ?? "", of: root, application: name(of: root), commandLine: commandLine)
    }

    private static func exit(_ root: any ParsableCommand.Type, _ error: any Error) -> Never {
        if let failure = error as? CommandFailure {
            write("\(name(of: root)): \(failure.message)\n", to: .standardError)
            Foundation.exit(failure.kind)
        }
        root.exit(withError: error)
    }

    private static func name(of root: any ParsableCommand.Type) -> String { root.configuration.commandName ?? "" }

    private static func write(_ text: String, to handle: FileHandle) { handle.write(Data(text.utf8)) }
}
