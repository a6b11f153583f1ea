import Foundation
public import Logging
public import ScreenMedia
public import ScreenRelay
import ScreenTransport
import ScreenWire
public import ServiceLifecycle

/// The relay screenpub runs itself when no destination is given: it listens on 127.0.0.1 (or `--host`, with
/// HTTPS given `--tls-cert`) and the share publishes to it in process (the same protocol, no socket). It is a
/// service of the share's group, the first, so that it stops last, after the stream has ended.
public struct EmbeddedRelay: Service {
    let relay: RelayServer
    let port: Int
    let address: String

    /// Makes the relay: it keeps archives in `dataDirectory`, or relays without them if that cannot be used.
    public init(_ settings: ShareConfiguration.EmbeddedRelaySettings, environment: [String: String], logger: Logger) async throws(ShareError) {
        var configuration = RelayConfiguration(
            host: settings.host, port: settings.port, secret: Self.secret(environment), publicURL: settings.publicURL,
            dataDirectory: settings.dataDirectory)
        configuration.tls = settings.tls
        port = settings.port
        address = "\(settings.host):\(settings.port)"
        do {
            relay = try await RelayServer(configuration: configuration, logger: logger)
        } catch let error as RelayError where error.kind == .badCertificate {
            throw ShareError(.cannotStart, "cannot serve HTTPS: \(error.message)")
        } catch {
            logger.warning("archives are off: \(configuration.dataDirectory ?? ""): \(error)")
            configuration.dataDirectory = nil
            do {
                relay = try await RelayServer(configuration: configuration, logger: logger)
            } catch {
                throw ShareError(.cannotStart, "cannot start the relay on \(settings.host):\(settings.port): \(error)")
            }
        }
    }

    public func run() async throws {
        do {
            try await relay.run()
        } catch {
            let reason = (error as? RelayError).map { $0.message } ?? "cannot listen on \(address): \(error)"
            throw ShareError(.cannotStart, "cannot start the relay: \(reason)")
        }
    }

    /// Reads its TLS certificate again (SIGHUP); what to log.
    public func reloadCertificate() -> Result<String, RelayError> { relay.reloadCertificate() }

    /// A session on this relay and a destination that publishes to it in process.
    public func destination(context: DestinationContext) async throws(ShareError) -> any StreamDestination {
        do {
            let session = try await relay.openSession(connectionData: "screenpub")
            return EmbeddedRelayDestination(relay: relay, port: port, session: session, context: context)
        } catch {
            throw ShareError(.cannotStart, "the relay in screenpub could not make a session: \(error)")
        }
    }

    /// $SCREENRELAY_SECRET when set (so that its HTTP API — tokens, signals, archives — can be used with
    /// curl), else a random one that lives and dies with this process.
    static func secret(_ environment: [String: String]) -> String {
        if let secret = environment["SCREENRELAY_SECRET"], !secret.isEmpty { return secret }
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(UInt64.random(in: 0...UInt64.max, using: &generator), radix: 16) }.joined()
            .padding(toLength: 48, withPad: "0", startingAt: 0)
    }
}

/// The share's stream into the embedded relay: a ``RelayDestination`` over the in-process transport, whose
/// session URLs are known once the relay listens.
struct EmbeddedRelayDestination: StreamDestination {
    let relay: RelayServer
    let port: Int
    let session: RelayServer.OpenedSession
    let inner: RelayDestination
    private let credentials = Locked<SessionCredentials?>(nil)

    init(relay: RelayServer, port: Int, session: RelayServer.OpenedSession, context: DestinationContext) {
        self.relay = relay
        self.port = port
        self.session = session
        inner = RelayDestination(transport: relay.inProcessTransport, token: session.token, session: nil, context: context)
    }

    var endpoint: String { credentials.value?.relayURL ?? inner.endpoint }
    func makeSink() throws -> any EncodedFrameSink { try inner.makeSink() }
    func makeRenditionSink() -> (any EncodedFrameSink)? { inner.makeRenditionSink() }
    func run() async throws { try await inner.run() }
    func announce(_ announcement: StreamAnnouncement) { inner.announce(announcement) }

    var status: DestinationStatus {
        var status = inner.status
        status.endpoint = endpoint
        status.sessionId = status.sessionId ?? session.sessionId
        status.viewerURL = credentials.value?.viewerURL
        return status
    }

    func startupMessage() async throws -> String? {
        // A relay that cannot listen prints nothing: its own service ends the share with the reason.
        guard let known = try? await relay.credentials(for: session) else { return nil }
        credentials.withLock { $0 = known }
        return known.announcement
    }
}
