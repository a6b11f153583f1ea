import ArgumentParser
import Foundation
import Logging
import ScreenRelay
import ScreenTransportClient
import ServiceLifecycle
import ScreenService
import ScreenWire

@main
enum ScreenrelayMain {
    /// The commands that call a relay's API instead of being one.
    static let adminCommands: Set<String> = ["session", "sessions", "token", "archive", "help"]

    static func main() async {
        var arguments = LayeredArguments.attachingNegativeNumbers(Array(CommandLine.arguments.dropFirst()))
        if arguments == ["--help"] || arguments == ["-h"] {
            // What people run most is the server: its options, then the admin commands.
            let commands = ScreenrelayCommand.helpMessage()
            print(ScreenrelayCommand.helpMessage(for: ServeCommand.self) + "\n"
                + (commands.range(of: "SUBCOMMANDS:").map { String(commands[$0.lowerBound...]) } ?? commands))
            return
        }
        let informational: Set<String> = ["-h", "--help", "--help-hidden", "--version", "--experimental-dump-help"]
        if let first = arguments.first, adminCommands.contains(first)
            || arguments.contains(where: { informational.contains($0) || $0.hasPrefix("--generate-completion-script") })
        {
            await ScreenrelayCommand.main(arguments)
            return
        }
        if arguments.first == "serve" { arguments.removeFirst() }
        var command: ServeCommand
        do {
            command = try ServeCommand.read(commandLine: arguments)
        } catch let error as ServiceError {
            FileHandle.standardError.write(Data("screenrelay: \(error)\n".utf8))
            exit(78)
        } catch {
            ScreenrelayCommand.exit(withError: error)
        }
        do {
            try await command.run()
        } catch {
            ScreenrelayCommand.exit(withError: error)
        }
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

    /// The server's settings from the configuration file, the environment and `commandLine` (without `serve`;
    /// see ``LayeredArguments/parse(_:as:of:application:commandLine:)``).
    static func read(commandLine: [String]) throws -> ServeCommand {
        try LayeredArguments.parse(ServeCommand.self, as: "serve", of: ScreenrelayCommand.self, application: "screenrelay", commandLine: commandLine)
    }

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "TCP port (0: any free port).")
    var port = 8090

    @Option(help: "File holding the relay secret (default: $SCREENRELAY_SECRET, else $XDG_CONFIG_HOME/screenrelay/secret if it exists).")
    var secretFile: String?

    @Option(help: "The URL clients use to reach this relay (e.g. behind a TLS proxy); else links use the Host a client asked for, or this machine's address when listening on 0.0.0.0.")
    var publicURL: String?

    @Option(help: "Another name this relay answers to (repeatable): requests with any other Host are refused (421), and WebSockets from pages of other sites. Loopback, this machine's addresses and host name, and --public-url's host are always answered.")
    var allowedHost: [String] = []

    @Option(help: "PEM certificate chain: serve HTTPS and WSS (with --tls-key). SIGHUP reads both again; open connections keep theirs.")
    var tlsCert: String?

    @Option(help: "PEM private key of --tls-cert.")
    var tlsKey: String?

    @Option(help: "Connections kept open at once (kept below the descriptor limit); past it new ones are closed at once.")
    var maxConnections = 10_000

    @Option(help: "Connections kept open from one IP address (loopback — a reverse proxy on this machine — has no cap).")
    var maxConnectionsPerAddress = 64

    @Option(help: "Sessions that may exist at once; POST /session answers 503 past it.")
    var maxSessions = 1000

    @Option(help: "Seconds a session may have no client and no recording before it is removed.")
    var emptySessionExpiry: Double = 6 * 3600

    @Option(help: "Seconds an HTTP connection may sit idle between requests; WebSockets are pinged every half of it and closed when a ping goes unanswered.")
    var idleTimeout: Double = 60

    @Option(help: "Seconds a request's head has to arrive whole: the first from the connection's start (TLS handshake included), a later one on a kept-alive connection from its first byte; slower ones are closed.")
    var requestTimeout: Double = 10

    @Option(help: "Largest request line (bytes); longer ones are answered 414 and closed.")
    var maxRequestLine = 8 << 10

    @Option(help: "Largest request header fields, all together (bytes); larger ones are answered 431 and closed.")
    var maxRequestHeaders = 32 << 10

    @Option(help: "Seconds a WebSocket message sent in fragments may take to arrive whole; slower ones close the connection (1008).")
    var messageDeadline: Double = 30

    @Option(help: "Largest message (bytes) before hello, and from viewers and moderators (they send only control messages); larger ones close the connection (1009).")
    var maxControlMessage = 64 << 10

    @Option(help: "Control messages and bytes of them that may wait to be written to one connection; past either it is closed (it does not read).")
    var maxQueuedMessages = RelayConfiguration.defaults.maximumQueuedControlMessages

    @Option(help: "See --max-queued-messages.")
    var maxQueuedControlBytes = RelayConfiguration.defaults.maximumQueuedControlBytes

    @Option(help: "Bytes of everything (media, control messages) that may wait to be written to one connection; past it, it is closed (it does not read). A viewer's media is thinned and skipped by the router well before (4 MiB a subscription).")
    var maxQueuedBytes = RelayConfiguration.defaults.maximumQueuedBytes

    @Option(help: "Bytes all connections together may have queued (a frame queued for many viewers counts once for each); past it, a connection holding more than its share is closed.")
    var maxRelayQueuedBytes = RelayConfiguration.defaults.maximumRelayQueuedBytes

    @Option(help: "Milliseconds of media (at its measured rate) a viewer may have queued before it is sent fewer temporal layers: a lower frame rate that its link carries.")
    var subscriberThin: Double = RouterLimits().thinAboveMilliseconds

    @Option(help: "Milliseconds of media a viewer may have queued before it skips to the next keyframe (when even the lowest layer does not fit).")
    var subscriberQueue: Double = RouterLimits().maximumQueuedMilliseconds

    @Option(help: "Milliseconds within which a thinned viewer's link must carry a frame of a layer it is not sent, behind what it has queued, for that frame to go to it all the same (only from publishers whose higher-layer frames are discardable; never delaying the next layer-0 frame). 0: never.")
    var subscriberFitIn: Double = RouterLimits().fitInMilliseconds

    @Option(help: "Seconds between keyframes one viewer may make the publisher send (the stream as a whole: at most two a second).")
    var subscriberKeyframeInterval: Double = RouterLimits().subscriberKeyframeIntervalSeconds

    @Option(help: "MiB one recording may write (its files together); it stops there, finished and playable.")
    var archiveMaxSize: Int = 2048

    @Option(help: "MiB one session's archives may take together; past it no recording starts (507) and one in progress stops.")
    var archiveSessionQuota: Int = 8192

    @Option(help: "MiB all the relay's archives may take together; past it no recording starts (507) and one in progress stops.")
    var archiveQuota: Int = 51200

    @Option(help: "MiB recordings leave free on the data directory's disk: below it none starts (507) and one in progress stops.")
    var archiveFreeSpace: Int = 1024

    @Option(help: "Seconds SIGTERM or SIGINT waits for clients to close, once recordings are finished, before the relay cuts their connections and exits.")
    var shutdownGrace: Double = 10

    @Option(help: "Seconds after a stream's last keyframe before a keyframe is asked of its publisher for viewers (joiners the cached pictures cannot start, viewers that fell behind or whose decoder failed): no viewer makes the others pay for keyframes more often. Keyframes for a recording or HLS are not under it.")
    var subscriberKeyframeCeiling: Double = RouterLimits().subscriberKeyframeCeilingSeconds

    @Option(help: "Keyframe requests one viewer may make per 10 s: each is answered from the cached pictures when they can start it, else by a keyframe under --subscriber-keyframe-ceiling; past them they wait, and a viewer that goes on asking (40 with none answered) is closed.")
    var subscriberKeyframeRequests: Int = RouterLimits().keyframeRequestsPerSubscriber

    @Option(help: "Seconds a viewer may take none of its queued media before it is closed (it stopped reading, whether or not it answers pings).")
    var subscriberStall: Double = RouterLimits().stallSeconds

    @Option(help: "Signals (chat) a whole session's connections may send together per second (twice as many at once): each goes to everyone, so this bounds what many connections of one token could make the relay deliver.")
    var sessionSignalsPerSecond: Double = RouterLimits().sessionSignalsPerSecond

    @Option(help: "Signals (chat) one connection may send per second on average…")
    var signalsPerSecond: Double = RouterLimits().signalsPerSecond

    @Option(help: "…and at once; past them a signal is refused (invalidSignal).")
    var signalBurst: Double = RouterLimits().signalBurst

    @Option(help: "Streams one connection may publish at once.")
    var maxStreamsPerConnection = RouterLimits().maximumStreamsPerConnection

    @Option(help: "Streams one session holds at once, whoever publishes them (at most 32: with them, every joiner's welcome fits a control message).")
    var maxStreamsPerSession = RouterLimits().maximumStreamsPerSession

    @Option(help: "Streams the connections of one token publish at once, together: one token cannot keep the others of its session from publishing.")
    var maxStreamsPerToken = RouterLimits().tokenShares.streamsPerToken

    @Option(help: "Connections one publisher or moderator token may hold in a session at once. A token's connections together also send at most --signals-per-second signals and twice --max-frames-per-second frames.")
    var maxConnectionsPerToken = RelayConfiguration.defaults.maximumConnectionsPerToken

    @Option(help: "Connections one viewer token may hold in a session at once: a viewer link may be shared, so size it for the audience one link is handed to (one connection a viewer, two briefly while it reconnects), or hand each group a token of its own.")
    var maxViewerConnectionsPerToken = RelayConfiguration.defaults.maximumViewerConnectionsPerToken

    @Option(help: "Connections one session holds at once, all roles together.")
    var maxConnectionsPerSession = RelayConfiguration.defaults.maximumConnectionsPerSession

    @Option(help: "Of --max-connections-per-session, the seats only publisher and moderator tokens may take: however many viewers come, the presenter can reconnect and a moderator join.")
    var reservedSeats = RelayConfiguration.defaults.reservedSeats

    @Option(help: "The address of a reverse proxy whose Forwarded / X-Forwarded-For headers are believed (repeat for more): WebSockets through it count, for --max-connections-per-address, as from the client it names.")
    var trustProxy: [String] = []

    @Option(help: "Video frames one stream may send per second (twice as many at once); audio frames: 200 a second. Past it frames are refused.")
    var maxFramesPerSecond: Double = RouterLimits().maximumFramesPerSecond

    @Option(help: "MiB of HLS segments one session keeps in memory (the relay's budget for all: 8 times it); past it the oldest go first.")
    var hlsSessionMemory = 64

    @Option(help: "Longest stream name, in bytes.")
    var maxStreamName = RouterLimits().maximumStreamNameBytes

    @Option(help: "Serve /metrics to whoever shows `Authorization: Bearer TOKEN`; without it, /metrics is served to this machine only (also $SCREENRELAY_METRICS_TOKEN or metrics-token in the config file, which keep it out of the process list).")
    var metricsToken: String?

    @Option(help: "Length of HLS segments (/hls/{session}/index.m3u8), in seconds: each starts at a keyframe, the stream's own when one comes past half of it, else one the relay asks for, which every live viewer of the stream gets too (at 6 s, ten a minute at most).")
    var hlsSegment: Double = 6

    @Option(help: "Length of LL-HLS parts within segments, in seconds (0.1 to 2, at most half a segment; default 0.5, or half a shorter segment): a part needs no keyframe; LL-HLS players play about two parts behind the frames.")
    var hlsPart: Double?

    @Option(help: "LL-HLS requests (blocking playlist reloads, hinted parts) one client — a token from one address — may have waiting at once, of the 500 a session lets wait; one more is answered 503 with Retry-After. A player needs one or two. Behind a reverse proxy, give it with --trust-proxy so that each client it forwards has its own share.")
    var hlsWaitingPerClient = RelayConfiguration.defaults.hlsWaitingRequestsPerClient

    @Option(help: "Also write every session's HLS to DIR/<session>/ (index.m3u8, segments), for nginx or a CDN to serve; kept on while streams last.")
    var hlsDir: String?

    @Option(help: "Also send every session's HLS to this HTTP origin: PUT URL/<session>/<file> for each new file, DELETE for segments that left the window (as ffmpeg's -method PUT); kept on while streams last.")
    var hlsPush: String?

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
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together: the certificate and its private key") }
        if let address = trustProxy.first(where: { !RelayConfiguration.isProxyAddress($0) }) {
            throw ValidationError("--trust-proxy takes the proxy's IP address as the relay sees it (e.g. 127.0.0.1), got '\(address)'")
        }
        guard maxConnections > 0, maxConnectionsPerAddress > 0, maxSessions > 0 else {
            throw ValidationError("--max-connections, --max-connections-per-address and --max-sessions must be positive")
        }
        guard requestTimeout > 0, messageDeadline > 0, maxControlMessage >= 1024, maxQueuedMessages > 0, maxQueuedControlBytes >= 65536,
            maxQueuedBytes >= maxQueuedControlBytes, maxRelayQueuedBytes >= maxQueuedBytes,
            signalsPerSecond > 0, signalBurst >= 1, maxStreamsPerConnection > 0, maxStreamName > 0, subscriberThin > 0,
            subscriberQueue >= subscriberThin, subscriberFitIn >= 0, subscriberKeyframeInterval > 0, subscriberStall > 0,
            subscriberKeyframeCeiling >= 0, subscriberKeyframeRequests > 0, sessionSignalsPerSecond > 0,
            (1...32).contains(maxStreamsPerSession), maxStreamsPerToken > 0, maxConnectionsPerToken > 0, maxConnectionsPerSession > 0,
            maxViewerConnectionsPerToken > 0, (0..<maxConnectionsPerSession).contains(reservedSeats),
            maxFramesPerSecond >= 1, maxFramesPerSecond <= 10_000, (1...65_536).contains(hlsSessionMemory)
        else {
            throw ValidationError(
                "the limits must be positive (--max-streams-per-session at most 32, --max-frames-per-second at most 10000, --max-control-message at least 1024, --max-queued-control-bytes at least 65536, --max-queued-bytes at least that, --max-relay-queued-bytes at least --max-queued-bytes, --subscriber-queue at least --subscriber-thin, --subscriber-fit-in 0 or more)")
        }
        guard archiveMaxSize > 0, archiveSessionQuota > 0, archiveQuota > 0, archiveFreeSpace >= 0,
            [archiveMaxSize, archiveSessionQuota, archiveQuota, archiveFreeSpace].allSatisfy({ $0 <= 1 << 30 })
        else {
            throw ValidationError("--archive-max-size, --archive-session-quota and --archive-quota must be positive MiB, --archive-free-space 0 or more")
        }
        guard shutdownGrace >= 0, shutdownGrace <= 3600 else { throw ValidationError("--shutdown-grace must be 0 to 3600 seconds") }
        guard emptySessionExpiry > 0, idleTimeout >= 2 else {
            throw ValidationError("--empty-session-expiry must be positive and --idle-timeout at least 2 seconds")
        }
        guard (256...(1 << 20)).contains(maxRequestLine), (1024...(1 << 20)).contains(maxRequestHeaders) else {
            throw ValidationError("--max-request-line must be 256 to 1048576 bytes and --max-request-headers 1024 to 1048576")
        }
        guard (1...500).contains(hlsWaitingPerClient) else {
            throw ValidationError("--hls-waiting-per-client must be 1 to 500, got \(hlsWaitingPerClient)")
        }
        if let hlsPush, !(hlsPush.hasPrefix("http://") || hlsPush.hasPrefix("https://")) {
            throw ValidationError("--hls-push must be an http:// or https:// URL, got '\(hlsPush)'")
        }
        guard hlsSegment >= 0.5 && hlsSegment <= 30 else {
            throw ValidationError("--hls-segment must be between 0.5 and 30 seconds, got \(hlsSegment)")
        }
        if let hlsPart, !(hlsPart >= 0.1 && hlsPart <= 2 && hlsPart <= hlsSegment / 2) {
            throw ValidationError("--hls-part must be between 0.1 and 2 seconds and at most half of --hls-segment (\(hlsSegment) s), got \(hlsPart)")
        }
        if let publicURL, !(publicURL.hasPrefix("http://") || publicURL.hasPrefix("https://")) {
            throw ValidationError("--public-url must be an http:// or https:// URL, got '\(publicURL)'")
        }
    }

    func run() async throws {
        LogFormat(rawValue: logFormat)?.bootstrap()
        var logger = Logger(label: "screenrelay")
        logger.logLevel = verbose ? .debug : .info
        let environment = ProcessInfo.processInfo.environment
        let secret: String
        switch RelaySecret.read(secretFile: secretFile, environment: environment) {
        case .success(let read): secret = read
        case .failure(let problem):
            logger.error("cannot start: \(problem.message)")
            throw ExitCode(2)
        }
        let dataDirectory = dataDir ?? RelayConfiguration.defaultDataDirectory(application: "screenrelay")
        var configuration = RelayConfiguration(
            host: host, port: port, secret: secret, publicURL: publicURL, publishersMaySignal: publisherSignals,
            dataDirectory: dataDirectory, archiveGraceSeconds: archiveGrace)
        configuration.allowedHosts = allowedHost
        configuration.shutdownGraceSeconds = shutdownGrace
        configuration.archiveLimits = ArchiveLimits(
            recordingBytes: Int64(archiveMaxSize) << 20, sessionBytes: Int64(archiveSessionQuota) << 20, relayBytes: Int64(archiveQuota) << 20,
            freeSpaceBytes: Int64(archiveFreeSpace) << 20)
        configuration.tls = tlsCert.map { RelayTLSFiles(certificateChain: $0, privateKey: tlsKey ?? "") }
        (configuration.maximumConnections, configuration.maximumConnectionsPerAddress) = (maxConnections, maxConnectionsPerAddress)
        (configuration.maximumSessions, configuration.emptySessionExpirySeconds) = (maxSessions, emptySessionExpiry)
        configuration.idleTimeoutSeconds = idleTimeout
        (configuration.requestHeadTimeoutSeconds, configuration.messageDeadlineSeconds) = (requestTimeout, messageDeadline)
        (configuration.maximumRequestLineBytes, configuration.maximumRequestHeaderBytes) = (maxRequestLine, maxRequestHeaders)
        configuration.maximumControlMessageSize = maxControlMessage
        (configuration.maximumQueuedControlMessages, configuration.maximumQueuedControlBytes) = (maxQueuedMessages, maxQueuedControlBytes)
        (configuration.maximumQueuedBytes, configuration.maximumRelayQueuedBytes) = (maxQueuedBytes, maxRelayQueuedBytes)
        (configuration.signalsPerSecond, configuration.signalBurst) = (signalsPerSecond, signalBurst)
        configuration.sessionSignalsPerSecond = sessionSignalsPerSecond
        (configuration.subscriberThinMilliseconds, configuration.subscriberQueueMilliseconds) = (subscriberThin, subscriberQueue)
        configuration.subscriberFitInMilliseconds = subscriberFitIn
        (configuration.subscriberKeyframeIntervalSeconds, configuration.subscriberStallSeconds) = (subscriberKeyframeInterval, subscriberStall)
        configuration.subscriberKeyframeCeilingSeconds = subscriberKeyframeCeiling
        configuration.subscriberKeyframeRequests = subscriberKeyframeRequests
        (configuration.maximumStreamsPerConnection, configuration.maximumStreamNameBytes) = (maxStreamsPerConnection, maxStreamName)
        (configuration.maximumStreamsPerSession, configuration.maximumFramesPerSecond) = (maxStreamsPerSession, maxFramesPerSecond)
        configuration.hlsSessionMemoryBytes = hlsSessionMemory << 20
        (configuration.maximumStreamsPerToken, configuration.maximumConnectionsPerToken) = (maxStreamsPerToken, maxConnectionsPerToken)
        configuration.maximumConnectionsPerSession = maxConnectionsPerSession
        (configuration.maximumViewerConnectionsPerToken, configuration.reservedSeats) = (maxViewerConnectionsPerToken, reservedSeats)
        configuration.trustedProxies = trustProxy
        configuration.metricsToken = metricsToken.flatMap { $0.isEmpty ? nil : $0 }
        configuration.hlsSegmentSeconds = hlsSegment
        configuration.hlsPartSeconds = hlsPart ?? min(0.5, hlsSegment / 2)
        configuration.hlsWaitingRequestsPerClient = hlsWaitingPerClient
        configuration.hlsPushURL = hlsPush
        var pushClient = RelayHTTPClient(peer: "the HLS origin")
        pushClient.timeoutSeconds = 10
        configuration.hlsPushClient = pushClient
        configuration.hlsDirectory = hlsDir.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        if let directory = configuration.hlsDirectory {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            guard access(directory, W_OK | X_OK) == 0 else {
                logger.error("cannot write HLS to \(directory): \(String(cString: strerror(errno))) (--hls-dir)")
                throw ExitCode(2)
            }
        }
        let server: RelayServer
        do {
            server = try await RelayServer(configuration: configuration, logger: logger)
        } catch let error as RelayError where error.kind == .badCertificate {
            logger.error("cannot serve HTTPS: \(error.message)")
            throw ExitCode(2)
        } catch {
            logger.error("cannot start: \((error as? RelayError)?.message ?? String(describing: error)) (data directory \(dataDirectory))")
            throw ExitCode(2)
        }
        let reload = ReloadOnHangup(logger: logger, announcement: "SIGHUP: reading the TLS certificate again") { [logger] in
            switch server.reloadCertificate() {
            case .success(let message): logger.info("\(message)")
            case .failure(let error): logger.error("the TLS certificate stays as it was: \(error.message)")
            }
        }
        // SIGTERM finishes the recordings first, then waits for clients to close for the grace period, then
        // drops those left (a client that reads nothing, or never answers the close, cannot hold it up); past
        // that and 10 s more, the group cancels the services.
        var groupConfiguration = ServiceGroupConfiguration(
            services: [.init(service: server), .init(service: reload)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = .milliseconds(Int(shutdownGrace * 1000) + 10_000)
        groupConfiguration.maximumCancellationDuration = .seconds(10)
        let group = ServiceGroup(configuration: groupConfiguration)
        do {
            try await group.run()
        } catch {
            logger.error("screenrelay stopped: \(String(describing: error))")
            throw ExitCode(1)
        }
    }
}
