import ArgumentParser
import Foundation
import Logging
import ScreenRelayAdmin
import ScreenRelayService
import ScreenService
import ScreenWire
import ServiceLifecycle

@main
enum ScreenrelayMain {
    static func main() async {
        await CommandEntry.run(
            ScreenrelayCommand.self, primary: ServeCommand.self,
            // The commands that call a relay's API instead of being one.
            otherCommands: ["session", "sessions", "token", "archive", "help"],
            arguments: LayeredArguments.attachingNegativeNumbers(Array(CommandLine.arguments.dropFirst())))
    }
}

/// `screenrelay`: the server (default) and the commands that manage one through its HTTP API.
struct ScreenrelayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "screenrelay",
        abstract: "The screenpub session server, and the commands that manage one.",
        discussion: """
            `screenrelay [options]` runs the server (the `serve` command; `screenrelay serve --help` lists its \
            options). The other commands call a running relay's HTTP API with the relay secret, read from the same \
            places the relay reads it, at the address its configuration gives (or --server); they exit 0 when \
            done, 1 when the relay could not be reached or refused, 64 on an invalid command line.
            """,
        version: ScreenpubVersion.current,
        subcommands: [ServeCommand.self, SessionCommand.self, SessionsCommand.self, TokenCommand.self, ArchiveCommand.self],
        defaultSubcommand: ServeCommand.self)
}

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the session server: sessions and tokens, WebSocket fan-out of screen streams (the default command).",
        discussion: """
            The secret that signs tokens and guards POST /session is read from --secret-file, \
            $SCREENRELAY_SECRET or $XDG_CONFIG_HOME/screenrelay/secret (at least 32 bytes); it is never logged. See docs/protocol.md for the wire \
            protocol and the README for the HTTP API.

            Settings: every option can also be set in $XDG_CONFIG_HOME/screenrelay/config.toml (or --config \
            FILE) as `name = value` with the option's long name (`port = 8090`, `secret-file = "/etc/…"`, \
            `publisher-signals = false`), or in the environment as SCREENRELAY_NAME (SCREENRELAY_PORT=8090). \
            The command line wins over the environment, which wins over the file.

            With --tls-cert and --tls-key it serves HTTPS and WSS, which browsers need to offer the viewer's \
            WebCodecs to other machines; SIGHUP reads the files again (a renewed certificate), without dropping \
            anyone. Behind a TLS proxy instead, see packaging/examples (nginx, Caddy) and give --public-url.

            Limits: what every client may make the relay hold or do has a bound, set by the options below; a few \
            are fixed: an HLS segment holds at most 16 MiB (the frames past it wait for the next keyframe), 500 \
            LL-HLS requests of a session wait for a part at once (more are answered 503; one client's share is \
            --hls-waiting-per-client), a session's playlist at \
            most 64 date ranges, markers 5 a second per session (20 at once), archive starts \
            and stops one every 2 s per session (4 at once), a stream's cached pictures 8 MiB or 2 500 frames, and \
            a joiner's welcome lists connections up to 24 KiB. What each limit does when reached, and the metric \
            that counts it: docs/operations.md.

            Exit status: 0 stopped by SIGINT/SIGTERM; 1 the server failed; 2 could not start (no or short \
            secret, port in use, unusable certificate); 64 invalid command line; 78 invalid configuration file or SCREENRELAY_* \
            variable.

            Examples:
              head -c 32 /dev/urandom | base64 > ~/.config/screenrelay/secret   # once: the secret
              screenrelay                                                  # serve this machine on 127.0.0.1:8090
              screenrelay --host 0.0.0.0 --tls-cert cert.pem --tls-key key.pem --public-url https://relay.example.org
              systemctl --user enable --now screenrelay                   # as a service
            """)

    @OptionGroup var options: ServeOptions

    func validate() throws { try options.check() }

    /// The relay of the options in one ServiceGroup; exits 2 if it could not start, 1 if it failed.
    func run() async throws {
        LogFormat(rawValue: options.logFormat)?.bootstrap()
        var logger = Logger(label: "screenrelay")
        logger.logLevel = options.verbose ? .debug : .info
        let group: ServiceGroup
        do throws(CommandFailure) {
            group = try await RelayService.group(options.relayConfiguration(environment: ProcessInfo.processInfo.environment), logger: logger)
        } catch {
            logger.error("\(error.message)")
            throw ExitCode(error.kind)
        }
        do throws(CommandFailure) {
            try await RelayService.run(group)
        } catch {
            logger.error("\(error.message)")
            throw ExitCode(error.kind)
        }
    }
}
