import ArgumentParser
import Foundation
import Logging
import ScreenRelay
import ServiceLifecycle
import ScreenService
import ScreenWire

@main
enum ScreenrelayMain {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let informational: Set<String> = ["-h", "--help", "--help-hidden", "--version", "--experimental-dump-help"]
        if arguments.contains(where: { informational.contains($0) || $0.hasPrefix("--generate-completion-script") }) {
            await ScreenrelayCommand.main(arguments)
            return
        }
        var command: ScreenrelayCommand
        do {
            let layers = try LayeredArguments.read(command: ScreenrelayCommand.self, application: "screenrelay", commandLine: arguments)
            do {
                command = try ScreenrelayCommand.parse(layers.arguments)
            } catch {
                if let explained = layers.explain(ScreenrelayCommand.message(for: error)) { throw ServiceError(.badConfiguration, explained) }
                ScreenrelayCommand.exit(withError: error)
            }
        } catch {
            FileHandle.standardError.write(Data("screenrelay: \(error)\n".utf8))
            exit(78)
        }
        do {
            try await command.run()
        } catch {
            ScreenrelayCommand.exit(withError: error)
        }
    }
}

struct ScreenrelayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "screenrelay",
        abstract: "The screenpub session server: sessions and tokens, WebSocket fan-out of screen streams.",
        discussion: """
            The secret that signs tokens and guards POST /session is read from --secret-file, \
            $SCREENRELAY_SECRET or $XDG_CONFIG_HOME/screenrelay/secret (at least 32 bytes); it is never logged. See docs/protocol.md for the wire \
            protocol and the README for the HTTP API.

            Settings: every option can also be set in $XDG_CONFIG_HOME/screenrelay/config.toml (or --config \
            FILE) as `name = value` with the option's long name (`port = 8090`, `secret-file = "/etc/…"`, \
            `publisher-signals = false`), or in the environment as SCREENRELAY_NAME (SCREENRELAY_PORT=8090). \
            The command line wins over the environment, which wins over the file.

            Exit status: 0 stopped by SIGINT/SIGTERM; 1 the server failed; 2 could not start (no or short \
            secret, port in use); 64 invalid command line; 78 invalid configuration file or SCREENRELAY_* \
            variable.
            """,
        version: ScreenpubVersion.current)

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "TCP port (0: any free port).")
    var port = 8090

    @Option(help: "File holding the relay secret (default: $SCREENRELAY_SECRET, else $XDG_CONFIG_HOME/screenrelay/secret if it exists).")
    var secretFile: String?

    @Option(help: "The URL clients use to reach this relay, if not http://HOST:PORT (e.g. behind a TLS proxy).")
    var publicURL: String?

    @Flag(
        inversion: .prefixedNo,
        help: "Let clients whose token has the publisher role send signals (chat); --no-publisher-signals refuses them (a publish-only screen).")
    var publisherSignals = true

    @Option(help: "Directory for archives and their index (default: $XDG_STATE_HOME/screenrelay, else ~/.local/state/screenrelay).")
    var dataDir: String?

    @Option(help: "Seconds a recorded session may have no published stream before its archive stops by itself.")
    var archiveGrace: Double = 10

    @Option(help: "Read settings from this TOML file instead of $XDG_CONFIG_HOME/screenrelay/config.toml.")
    var config: String?

    @Option(help: "Log lines on standard error: text (what journald shows as is) or json (one object per line).")
    var logFormat = "text"

    @Flag(name: .shortAndLong, help: "Log more detail.")
    var verbose = false

    func validate() throws {
        guard LogFormat(rawValue: logFormat) != nil else { throw ValidationError("--log-format must be text or json, got '\(logFormat)'") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535, got \(port)") }
        guard archiveGrace >= 0 else { throw ValidationError("--archive-grace must not be negative") }
    }

    func run() async throws {
        LogFormat(rawValue: logFormat)?.bootstrap()
        var logger = Logger(label: "screenrelay")
        logger.logLevel = verbose ? .debug : .info
        let environment = ProcessInfo.processInfo.environment
        // The secret: --secret-file, else $SCREENRELAY_SECRET, else the default file if there is one.
        let defaultSecretFile = (LayeredArguments.defaultFile(application: "screenrelay", environment: environment) as NSString)
            .deletingLastPathComponent + "/secret"
        let secret: String
        if let file = secretFile ?? (environment["SCREENRELAY_SECRET", default: ""].isEmpty
            && FileManager.default.fileExists(atPath: defaultSecretFile) ? defaultSecretFile : nil)
        {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                logger.error("cannot read the secret file \(file)")
                throw ExitCode(2)
            }
            secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
        } else {
            secret = environment["SCREENRELAY_SECRET"] ?? ""
        }
        let dataDirectory = dataDir ?? RelayConfiguration.defaultDataDirectory(application: "screenrelay")
        let server: RelayServer
        do {
            server = try await RelayServer(
                configuration: RelayConfiguration(
                    host: host, port: port, secret: secret, publicURL: publicURL, publishersMaySignal: publisherSignals,
                    dataDirectory: dataDirectory, archiveGraceSeconds: archiveGrace),
                logger: logger)
        } catch {
            logger.error("cannot start: \(String(describing: error)) (secret from --secret-file, $SCREENRELAY_SECRET or \(defaultSecretFile); data directory \(dataDirectory))")
            throw ExitCode(2)
        }
        let group = ServiceGroup(
            configuration: .init(services: [server], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch {
            logger.error("screenrelay stopped: \(String(describing: error))")
            throw ExitCode(1)
        }
    }
}
