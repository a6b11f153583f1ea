import Foundation
public import ScreenMedia
public import ScreenSession
public import ScreenTransport
import ScreenTransportClient
public import ScreenWire

/// A screenrelay: `http(s)://host:port` (with a token, or a new session made with the relay secret from
/// the environment) or its WebSocket `ws(s)://host:port/ws` (with a token); or a relay in this process.
/// Frames are queued for the connection, never waited for, and the connection comes back after a drop.
public struct RelayDestination: StreamDestination {
    public let publisher: RelayPublisher
    /// The session made for this share (printed, and shown by `screenpub status`); nil with a given token.
    public let session: SessionCredentials?

    public static let kind = DestinationKind(.relay, schemes: ["http", "https", "ws", "wss"]) { url, context in
        let base = url.hasSuffix("/") ? String(url.dropLast()) : url
        let isWebSocket = DestinationKind.scheme(of: url).hasPrefix("ws")
        let endpoint: String, token: String, session: SessionCredentials?
        if let given = context.options.token {
            (endpoint, token, session) = (isWebSocket ? base : RelayEndpoint.webSocketURL(server: base), given, nil)
        } else if isWebSocket {
            throw ShareError(.cannotStart, "\(url) needs --token (or give the relay's http:// address and the secret in $SCREENRELAY_SECRET)")
        } else {
            guard let secret = context.environment["SCREENRELAY_SECRET"], !secret.isEmpty else {
                throw ShareError(.cannotStart, "--server needs --token, or the relay secret in $SCREENRELAY_SECRET to make a session")
            }
            let made: SessionCredentials
            do throws(SessionAPIError) {
                made = try await SessionAPIClient(server: base, secret: secret, trust: context.options.trust).createSession(title: nil)
            } catch {
                throw ShareError(.cannotStart, "the relay at \(base) did not create a session: \(error.message)")
            }
            (endpoint, token, session) = (made.relayURL, made.token, made)
        }
        return RelayDestination(transport: WebSocketTransport(url: endpoint, trust: context.options.trust), token: token, session: session, context: context)
    }

    public init(transport: any RelayTransport, token: String, session: SessionCredentials?, context: DestinationContext) {
        self.session = session
        publisher = RelayPublisher(
            transport: transport, token: token, framesPerSecond: context.framesPerSecond, pictureRequests: context.pictureRequests,
            reconnection: context.options.reconnect ? .init() : .never, audio: context.audio,
            uplink: UplinkController.Configuration(maximumKbps: context.bitrateKbps), pacing: context.pacing.addVoice(),
            renditions: context.renditions?.requests ?? RenditionRequests(), renditionCodecs: context.renditions.map { [$0.codec] } ?? [],
            logger: context.logger,
            onSignal: context.onSignal)
    }

    public var endpoint: String { publisher.endpoint }

    public func makeSink() throws -> any EncodedFrameSink { publisher }

    public func makeRenditionSink() -> (any EncodedFrameSink)? { publisher.renditionSink }

    public func run() async throws { try await publisher.run() }

    public func announce(_ announcement: StreamAnnouncement) {
        publisher.setVideoEnabled(announcement.hasVideo)
        publisher.setAudioEnabled(announcement.hasAudio)
        publisher.setFramesPerSecond(announcement.framesPerSecond)
    }

    public var status: DestinationStatus {
        let connection = publisher.connectionStatus
        var status = DestinationStatus(
            kind: .relay, endpoint: endpoint, connected: connection.connected, everConnected: connection.everConnected,
            lastProblem: connection.lastProblem,
            sessionId: connection.sessionId ?? session?.sessionId, streamId: connection.streamId.map(Int.init),
            viewerURL: session?.viewerURL, viewers: connection.otherConnections)
        (status.targetKbps, status.uplinkKbps, status.rateReason) = (connection.targetKbps, connection.uplinkKbps, connection.rateReason)
        status.framesDropped = publisher.droppedFrames
        return status
    }

    public func startupMessage() async throws -> String? { session?.announcement }
}
