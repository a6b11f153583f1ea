public import ArgumentParser
import Foundation
import ScreenRelay
import ScreenRelayAdmin
import ScreenService
import ScreenTransport
import ScreenTransportClient
public import ScreenWire

/// What every admin command needs: which relay, its secret, how to trust it, and the output form.
struct AdminOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The relay to manage, as http(s)://host:port.",
            discussion: "Default: the relay this machine's screenrelay configuration describes (its public-url, else its port on 127.0.0.1)."))
    var server: String?

    @Option(help: "File holding the relay secret (default: as the relay reads it: secret-file from its configuration, $SCREENRELAY_SECRET, $XDG_CONFIG_HOME/screenrelay/secret).")
    var secretFile: String?

    @Option(help: "PEM file of the certificate authorities to trust for an https relay (default: the system's).")
    var caFile: String?

    @Option(help: "The relay's configuration file to read the defaults from (default: $XDG_CONFIG_HOME/screenrelay/config.toml).")
    var config: String?

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func validate() throws {
        if let server, !(server.hasPrefix("http://") || server.hasPrefix("https://")) {
            throw ValidationError("--server must be an http:// or https:// URL, got '\(server)'")
        }
    }

    /// A client for the relay, or exit 1 with the sentence that says what is missing.
    func client() throws -> SessionAPIClient {
        let environment = ProcessInfo.processInfo.environment
        // The relay's own settings (file and environment) give the defaults; a broken file is said when they are
        // needed (no --server or no --secret-file given), not silently replaced by other defaults.
        var relay: ServeCommand?
        do {
            relay = try ServeCommand.read(commandLine: config.map { ["--config", $0] } ?? [])
        } catch {
            if server == nil || secretFile == nil {
                fail("the relay's settings cannot be read, so its address and secret are not known (\(error)); fix them or give --server and --secret-file")
            }
        }
        let secret: String
        switch RelaySecret.read(secretFile: secretFile ?? relay?.secretFile, environment: environment) {
        case .success(let read): secret = read
        case .failure(let problem): fail(problem.message)
        }
        let trust = ClientTrust(caFile: caFile)
        do { try trust.validate() } catch { fail("--ca-file: \(error.message)") }
        return SessionAPIClient(server: server ?? Self.defaultServer(relay), secret: secret, trust: trust)
    }

    /// Where this machine's relay is reached from here.
    static func defaultServer(_ relay: ServeCommand?) -> String {
        if let publicURL = relay?.publicURL { return publicURL }
        let scheme = relay?.tlsCert == nil ? "http" : "https"
        let host = relay?.host ?? "127.0.0.1"
        let local = ["0.0.0.0", "*", ""].contains(host) ? "127.0.0.1" : ["::", "[::]"].contains(host) ? "[::1]" : host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(local):\(relay?.port ?? 8090)"
    }

    func print(_ text: @autoclosure () -> String, json value: some Encodable) {
        Swift.print(json ? RelayAdminOutput.json(value) : text())
    }
}

/// Says what went wrong and exits 1.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("screenrelay: \(message)\n".utf8))
    exit(1)
}

/// Runs an admin call, turning its failure into a sentence and exit 1.
func admin<T>(_ call: () async throws(SessionAPIError) -> T) async -> T {
    do { return try await call() } catch { fail(error.message) }
}

struct SessionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session", abstract: "Make a session.", subcommands: [CreateSessionCommand.self])
}

struct CreateSessionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Make a session; print its id, the publisher's token, the relay's address and a viewer link.",
        discussion: """
            Examples:
              screenrelay session create --title "Friday demo"
              screenrelay session create --json | jq -r .token
            """)

    @OptionGroup var options: AdminOptions

    @Option(help: "The session's title, shown to viewers (one line, at most 200 characters).")
    var title: String?

    func run() async throws {
        let client = try options.client()
        let created = await admin { () async throws(SessionAPIError) in try await client.createSession(title: title) }
        options.print(RelayAdminOutput.created(created), json: created)
    }
}

struct SessionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sessions",
        abstract: "List the relay's sessions: what is published, how many watch, what is recorded.",
        discussion: """
            Examples:
              screenrelay sessions
              screenrelay sessions --server https://relay.example.org --json
            """)

    @OptionGroup var options: AdminOptions

    func run() async throws {
        let client = try options.client()
        let sessions = await admin { () async throws(SessionAPIError) in try await client.sessions() }
        options.print(RelayAdminOutput.sessions(sessions), json: sessions)
    }
}

extension Role: ExpressibleByArgument {
    /// "viewer" is what people call a subscriber.
    public init?(argument: String) {
        self.init(rawValue: argument == "viewer" ? "subscriber" : argument)
    }
}

struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Mint a token for a session; print it and, for a subscriber or moderator, the viewer link.",
        discussion: """
            Examples:
              screenrelay token 3f0c… --name Ada                      # a viewer link for Ada, valid 24 h
              screenrelay token 3f0c… --role moderator --expires 2h   # may record and see archives
              screenrelay token 3f0c… --role publisher                # for screenpub --token
            """)

    @OptionGroup var options: AdminOptions

    @Argument(help: "The session's id (screenrelay sessions lists them).")
    var session: String

    @Option(help: "What the token allows: subscriber (watch and chat; also: viewer), moderator (also record), publisher (share).")
    var role: Role = .subscriber

    @Option(help: "The participant's name, shown in chat and join lines (stored as name=… in the token's connection data).")
    var name: String?

    @Option(help: "More connection data for the token, in URL-query form (team=blue&seat=4).")
    var data: String?

    @Option(help: "How long the token is valid: seconds, or with a unit: 90s, 15m, 2h, 7d (at most 30d).")
    var expires = "24h"

    func validate() throws {
        guard let seconds = Lifetime.seconds(expires) else {
            throw ValidationError("--expires takes a number of seconds or one with a unit (90s, 15m, 2h, 7d), got '\(expires)'")
        }
        guard seconds <= 30 * 86400 else { throw ValidationError("--expires must be at most 30 days, got \(expires)") }
    }

    func run() async throws {
        let client = try options.client()
        let lifetime = Lifetime.seconds(expires) ?? 86400
        let minted = await admin { () async throws(SessionAPIError) in
            try await client.mintToken(session: session, role: role, name: name, data: data, expiresIn: lifetime)
        }
        options.print(RelayAdminOutput.minted(minted), json: minted)
    }
}

struct ArchiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "archive",
        abstract: "Record sessions, and list, download or delete their archives.",
        subcommands: [
            StartArchiveCommand.self, StopArchiveCommand.self, ListArchivesCommand.self, DownloadArchiveCommand.self,
            DeleteArchiveCommand.self,
        ])
}

struct StartArchiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start", abstract: "Start recording a session (its streams, with their frame metadata).",
        discussion: "Example:\n  screenrelay archive start 3f0c… --name \"Friday demo\"")

    @OptionGroup var options: AdminOptions
    @Argument(help: "The session to record.") var session: String
    @Option(help: "A name for the archive (its download is called NAME-0.webm).") var name: String?

    func run() async throws {
        let client = try options.client()
        let archive = await admin { () async throws(SessionAPIError) in try await client.startArchive(session: session, name: name) }
        options.print(RelayAdminOutput.archive(archive), json: archive)
    }
}

struct StopArchiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop", abstract: "Stop a recording; its file is complete when this returns.",
        discussion: "Example:\n  screenrelay archive stop 9b21…")

    @OptionGroup var options: AdminOptions
    @Argument(help: "The archive's id (screenrelay archive list).") var archive: String

    func run() async throws {
        let client = try options.client()
        let stopped = await admin { () async throws(SessionAPIError) in try await client.stopArchive(archive) }
        options.print(RelayAdminOutput.archive(stopped), json: stopped)
    }
}

struct ListArchivesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List archives, newest first; recordings in progress show their size and length so far.",
        discussion: "Examples:\n  screenrelay archive list\n  screenrelay archive list 3f0c… --json")

    @OptionGroup var options: AdminOptions
    @Argument(help: "Only this session's archives.") var session: String?

    func run() async throws {
        let client = try options.client()
        let archives = await admin { () async throws(SessionAPIError) in try await client.archives(session: session) }
        options.print(RelayAdminOutput.archives(archives), json: archives)
    }
}

struct DownloadArchiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "download", abstract: "Download an archive's WebM (with its timed metadata track).",
        discussion: "Example:\n  screenrelay archive download 9b21… --output demo.webm")

    @OptionGroup var options: AdminOptions
    @Argument(help: "The archive's id.") var archive: String
    @Option(name: .shortAndLong, help: "Where to write it (default: ARCHIVE-STREAM.webm in the current directory).") var output: String?
    @Option(help: "Which of its streams, from 0.") var stream = 0

    func run() async throws {
        let client = try options.client()
        let path = output ?? "\(archive)-\(stream).webm"
        let size = await admin { () async throws(SessionAPIError) in try await client.downloadArchive(archive, stream: stream, to: path) }
        struct Downloaded: Encodable { var path: String; var bytes: Int }
        options.print("wrote \(path) (\(size) bytes)", json: Downloaded(path: path, bytes: size))
    }
}

struct DeleteArchiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete an archive and its files (a recording in progress is stopped first).",
        discussion: "Example:\n  screenrelay archive delete 9b21…")

    @OptionGroup var options: AdminOptions
    @Argument(help: "The archive's id.") var archive: String

    func run() async throws {
        let client = try options.client()
        await admin { () async throws(SessionAPIError) in try await client.deleteArchive(archive) }
        struct Deleted: Encodable { var deleted: String }
        options.print("deleted archive \(archive)", json: Deleted(deleted: archive))
    }
}
