public import ArgumentParser
public import Foundation
public import ScreenMedia
import ScreenRelay
public import ScreenRelayService
public import ScreenService
public import ScreenTransportClient

/// What every admin command needs: which relay, its secret, how to trust it, and the output form.
public struct AdminOptions: ParsableArguments {
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

    public init() {}

    public func validate() throws {
        if let server, !(server.hasPrefix("http://") || server.hasPrefix("https://")) {
            throw ValidationError("--server must be an http:// or https:// URL, got '\(server)'")
        }
    }

    /// A client for the relay, or the sentence that says what is missing (exit 1). This machine's relay settings
    /// (`localRelay`: its file and environment) give the defaults; a broken file is said when they are needed (no
    /// --server or no --secret-file given), not silently replaced by other defaults.
    public func client(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        localRelay: (_ commandLine: [String]) throws -> ServeOptions = { try ServeOptions.read(commandLine: $0) }
    ) throws(CommandFailure) -> SessionAPIClient {
        let relay: ServeOptions?
        do {
            relay = try localRelay(config.map { ["--config", $0] } ?? [])
        } catch {
            guard server != nil, secretFile != nil else {
                throw Self.failure("the relay's settings cannot be read, so its address and secret are not known (\(error)); fix them or give --server and --secret-file")
            }
            relay = nil
        }
        let secret: String
        switch RelaySecret.read(secretFile: secretFile ?? relay?.secretFile, environment: environment) {
        case .success(let read): secret = read
        case .failure(let problem): throw Self.failure(problem.message)
        }
        let trust = ClientTrust(caFile: caFile)
        do { try trust.validate() } catch { throw Self.failure("--ca-file: \(error.message)") }
        // Without settings, --server was given.
        return SessionAPIClient(server: server ?? relay.map(Self.defaultServer) ?? "", secret: secret, trust: trust)
    }

    /// Where `relay` (this machine's) is reached from here.
    static func defaultServer(_ relay: ServeOptions) -> String {
        if let publicURL = relay.publicURL { return publicURL }
        let scheme = relay.tlsCert == nil ? "http" : "https"
        let host = relay.host
        let local = ["0.0.0.0", "*", ""].contains(host) ? "127.0.0.1" : ["::", "[::]"].contains(host) ? "[::1]" : host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(local):\(relay.port)"
    }

    /// Runs an admin call, turning its failure into a sentence and exit 1.
    func call<T>(_ call: () async throws(SessionAPIError) -> T) async throws(CommandFailure) -> T {
        do { return try await call() } catch { throw Self.failure(error.message) }
    }

    /// Prints `text`, or `value` as JSON with --json.
    func print(_ text: @autoclosure () -> String, json value: some Encodable) {
        Swift.print(json ? RelayAdminOutput.json(value) : text())
    }

    static func failure(_ message: String) -> CommandFailure { CommandFailure(ExitStatus.runtimeFailure, message) }
}
