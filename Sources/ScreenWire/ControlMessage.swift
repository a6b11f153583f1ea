import Foundation
public import ScreenMedia

/// A JSON control message, sent in a WebSocket text frame as `{"v":1,"type":"…",…fields}`.
/// Every message and field is specified in docs/protocol.md.
public enum ControlMessage: Sendable, Hashable {
    // Client → relay.
    /// First message of every client: the token decides session and role.
    case hello(token: String, client: String)
    /// Announces a stream; the relay answers `published` with its id. With `acks`, the relay acknowledges each
    /// of its video frames as it arrives (``ack(streamId:sequence:receivedAt:)``; protocol 3). With
    /// `discardableLayers`, its frames above temporal layer 0 each predict only from the newest layer-0 frame and
    /// none predicts from them, so the relay may send or leave out each one on its own (protocol 4). With
    /// `refreshes`, it answers ``requestRefresh(streamId:)`` (protocol 6). `renditions` are the codecs it can add a
    /// second rendition of the stream in when the relay asks (``startRendition(streamId:codec:)``; protocol 7).
    case publish(
        name: String, properties: StreamProperties, acks: Bool = false, discardableLayers: Bool = false, refreshes: Bool = false,
        renditions: [VideoCodec] = [])
    /// Publisher → relay (protocol 7): a second rendition of its stream `streamId` starts, in these properties'
    /// codec; the relay answers `published` with the rendition's own stream id (its ``StreamInfo/renditionOf`` is
    /// `streamId`), on which its frames come.
    case publishRendition(streamId: UInt32, properties: StreamProperties)
    case unpublish(streamId: UInt32)
    /// Start receiving a stream; `audio` asks for its audio frames too (peers from before audio existed do not
    /// ask, and never get a frame they could not parse); `layers` says the subscriber reads temporal layer ids
    /// in video frames' flags (protocol 3; others get those bits cleared); `catchUp` says it reads the catch-up
    /// flag (``MediaFrameHeader/Flags/catchUp``: frames to decode, not to show; protocol 5). `decodes` lists the
    /// codec strings, or their beginnings, of what the subscriber decodes (`av01.0`, `avc1.42`; protocol 7): the
    /// relay sends it the stream in a rendition it decodes (``renditionChanged(streamId:rendition:)``), asking the
    /// publisher for one if none fits; nil (a subscriber from before) is sent the stream as published.
    case subscribe(streamId: UInt32, audio: Bool = false, layers: Bool = false, catchUp: Bool = false, decodes: [String]? = nil)
    case unsubscribe(streamId: UInt32)
    /// Subscriber → relay: I need a keyframe. Relay → publisher: send a keyframe now.
    case requestKeyframe(streamId: UInt32)
    /// Relay → a publisher that said it `refreshes`: send a frame on the next tick, any kind — on an idle screen
    /// the unchanged picture as a keepalive, a few bytes (an HLS part is due and needs a frame to end on).
    case requestRefresh(streamId: UInt32)
    /// Both ways: a client sends a signal; the relay delivers it with `from` and `fromData` filled in.
    case signal(Signal)
    /// Publisher → relay (protocol 3): what its uplink controller aims the stream's encoder at and what it measured
    /// the uplink to carry (kbit/s; nil before it knows), for the relay's `/metrics`. Sent when they change, at
    /// most every few seconds.
    case uplink(streamId: UInt32, targetKbps: Int, estimatedKbps: Int?)
    /// Both ways: the publisher changed its stream's properties (paused or resumed video, a new frame rate);
    /// the relay keeps them and tells everyone in the session (the seed's `streamPropertyChanged`).
    case streamPropertyChanged(streamId: UInt32, properties: StreamProperties)

    // Relay → client.
    /// `protocolVersion` is the relay's (``protocolVersion``; 2 when a relay from before version 3 left it out):
    /// a publisher asks for acknowledgements and writes layer ids only to a relay of version 3 or later.
    case welcome(
        connectionId: String, sessionId: String, role: Role, streams: [StreamInfo], connections: [ConnectionInfo],
        protocolVersion: Int = ControlMessage.protocolVersion)
    /// To a publisher that asked for acknowledgements: the relay has received video frame `sequence` of the
    /// stream, at `receivedAt` (milliseconds on the relay's monotonic clock: only differences mean anything).
    case ack(streamId: UInt32, sequence: UInt64, receivedAt: Double)
    /// To a subscriber: what the relay now sends it of a stream. `highestLayer` of `layers` temporal layers
    /// (lower when its link cannot carry them all), or `waitingForKeyframe` when not even layer 0 fits.
    case subscriptionChanged(streamId: UInt32, highestLayer: Int, layers: Int, waitingForKeyframe: Bool)
    /// To a subscriber that said what it `decodes` (protocol 7): its pictures of stream `streamId` now come in
    /// the frames of `rendition` (another stream id, its codec in its properties), or in the stream's own frames
    /// (nil). Sent after `subscribed` when a rendition serves it, and whenever that changes.
    case renditionChanged(streamId: UInt32, rendition: StreamInfo?)
    /// To a publisher that offered `renditions` (protocol 7): viewers need the stream in `codec` too; start an
    /// encoder and ``publishRendition(streamId:properties:)``.
    case startRendition(streamId: UInt32, codec: VideoCodec)
    /// To a publisher: nobody has needed its rendition in `codec` for a while; stop it and unpublish it.
    case stopRendition(streamId: UInt32, codec: VideoCodec)
    case published(StreamInfo)
    case subscribed(streamId: UInt32)
    case streamCreated(StreamInfo)
    case streamDestroyed(streamId: UInt32, reason: String)
    case connectionCreated(ConnectionInfo)
    case connectionDestroyed(connectionId: String)
    case error(code: WireErrorCode, message: String)
    /// The session is being recorded (the seed's recording indicator).
    case archiveStarted(archiveId: String, name: String)
    /// The recording ended: `status` is `stopped`, `available` or `failed` (with `reason`).
    case archiveStopped(archiveId: String, status: String, reason: String)

    /// The JSON envelope's version (`"v"`): every protocol version so far only added optional fields to it.
    public static let version = 1
    /// The protocol version this peer speaks (docs/protocol.md): 2 added sound, 3 acknowledgements and layers,
    /// 4 discardable layers, 5 catch-up frames, 6 refresh requests, 7 renditions.
    public static let protocolVersion = 7
    /// The most codec strings a `subscribe` may list in `decodes`, and the longest each may be.
    public static let maximumDecodes = 16
    public static let maximumCodecStringBytes = 64
    /// The largest control message accepted.
    public static let maximumSize = 64 * 1024
    /// The highest uplink rate a publisher may report (kbit/s: 10 Gbit/s).
    public static let maximumUplinkKbps = 10_000_000

    /// The wire name of the message type.
    public var type: String {
        switch self {
        case .hello: "hello"
        case .publish: "publish"
        case .publishRendition: "publishRendition"
        case .renditionChanged: "renditionChanged"
        case .startRendition: "startRendition"
        case .stopRendition: "stopRendition"
        case .unpublish: "unpublish"
        case .subscribe: "subscribe"
        case .unsubscribe: "unsubscribe"
        case .requestKeyframe: "requestKeyframe"
        case .requestRefresh: "requestRefresh"
        case .signal: "signal"
        case .streamPropertyChanged: "streamPropertyChanged"
        case .archiveStarted: "archiveStarted"
        case .archiveStopped: "archiveStopped"
        case .welcome: "welcome"
        case .ack: "ack"
        case .uplink: "uplink"
        case .subscriptionChanged: "subscriptionChanged"
        case .published: "published"
        case .subscribed: "subscribed"
        case .streamCreated: "streamCreated"
        case .streamDestroyed: "streamDestroyed"
        case .connectionCreated: "connectionCreated"
        case .connectionDestroyed: "connectionDestroyed"
        case .error: "error"
        }
    }

    /// The message as compact JSON text.
    public func encoded() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding these plain structs cannot fail.
        let data = (try? encoder.encode(Envelope(message: self))) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// Parses one text frame. Anything that is not a valid message of this version is a ``WireError``.
    public static func parse(_ text: some StringProtocol) throws(WireError) -> ControlMessage {
        let bytes = Data(text.utf8)
        guard bytes.count <= maximumSize else {
            throw WireError(.tooLarge, "control message of \(bytes.count) bytes exceeds \(maximumSize)")
        }
        let decoder = JSONDecoder()
        let head: Head
        do {
            head = try decoder.decode(Head.self, from: bytes)
        } catch {
            // (JSON that does not decode to the head has a number out of range: "v" past an integer's.)
            let isJSON = (try? JSONSerialization.jsonObject(with: bytes)) != nil
            let problem = DecodingProblem.describe(error, isJSON: isJSON).map { ": \($0)" } ?? ""
            throw WireError(.malformed, "control message is not a JSON object with a whole-number \"v\" and a string \"type\"\(problem)")
        }
        guard head.v == version else {
            throw WireError(.unsupportedVersion, "control message version \(head.v) is not supported (this peer speaks \(version))")
        }
        do {
            switch head.type {
            case "hello":
                let body = try decoder.decode(HelloBody.self, from: bytes)
                return .hello(token: body.token, client: body.client ?? "")
            case "publish":
                let body = try decoder.decode(PublishBody.self, from: bytes)
                guard (body.renditions?.count ?? 0) <= VideoCodec.allCases.count else {
                    throw WireError(.malformed, "publish offers at most \(VideoCodec.allCases.count) renditions")
                }
                let offers = try (body.renditions ?? []).map { name throws(WireError) -> VideoCodec in
                    guard let codec = VideoCodec(rawValue: name) else {
                        let known = VideoCodec.allCases.map(\.rawValue).joined(separator: ", ")
                        throw WireError(.malformed, "publish's renditions are codecs among \(known), not \"\(String(name.prefix(16)).escapingControlCharacters)\"")
                    }
                    return codec
                }
                return .publish(
                    name: body.name ?? "", properties: try body.properties.checkedBounds(), acks: body.acks ?? false,
                    discardableLayers: body.discardableLayers ?? false, refreshes: body.refreshes ?? false,
                    renditions: offers)
            case "publishRendition":
                let body = try decoder.decode(StreamPropertiesBody.self, from: bytes)
                return .publishRendition(streamId: body.streamId, properties: try body.properties.checkedBounds())
            case "renditionChanged":
                let body = try decoder.decode(RenditionChangedBody.self, from: bytes)
                return .renditionChanged(streamId: body.streamId, rendition: try body.rendition?.checkedBounds())
            case "startRendition", "stopRendition":
                let body = try decoder.decode(RenditionCodecBody.self, from: bytes)
                return head.type == "startRendition"
                    ? .startRendition(streamId: body.streamId, codec: body.codec) : .stopRendition(streamId: body.streamId, codec: body.codec)
            case "unpublish": return .unpublish(streamId: try decoder.decode(StreamBody.self, from: bytes).streamId)
            case "subscribe":
                let body = try decoder.decode(SubscribeBody.self, from: bytes)
                if let decodes = body.decodes {
                    guard decodes.count <= maximumDecodes,
                        decodes.allSatisfy({ $0.utf8.count <= maximumCodecStringBytes && StreamProperties.isCodecStringText($0) })
                    else {
                        throw WireError(.malformed, "subscribe's decodes lists at most \(maximumDecodes) codec strings of at most \(maximumCodecStringBytes) letters, digits, dots, dashes or underscores")
                    }
                }
                return .subscribe(
                    streamId: body.streamId, audio: body.audio ?? false, layers: body.layers ?? false, catchUp: body.catchUp ?? false,
                    decodes: body.decodes)
            case "unsubscribe": return .unsubscribe(streamId: try decoder.decode(StreamBody.self, from: bytes).streamId)
            case "requestKeyframe": return .requestKeyframe(streamId: try decoder.decode(StreamBody.self, from: bytes).streamId)
            case "requestRefresh": return .requestRefresh(streamId: try decoder.decode(StreamBody.self, from: bytes).streamId)
            case "signal": return .signal(try decoder.decode(Signal.self, from: bytes))
            case "streamPropertyChanged":
                let body = try decoder.decode(StreamPropertiesBody.self, from: bytes)
                return .streamPropertyChanged(streamId: body.streamId, properties: try body.properties.checkedBounds())
            case "archiveStarted":
                let body = try decoder.decode(ArchiveStartedBody.self, from: bytes)
                return .archiveStarted(archiveId: body.archiveId, name: body.name)
            case "archiveStopped":
                let body = try decoder.decode(ArchiveStoppedBody.self, from: bytes)
                return .archiveStopped(archiveId: body.archiveId, status: body.status, reason: body.reason)
            case "welcome":
                let body = try decoder.decode(WelcomeBody.self, from: bytes)
                return .welcome(
                    connectionId: body.connectionId, sessionId: body.sessionId, role: body.role, streams: try body.streams.map { stream throws(WireError) in try stream.checkedBounds() },
                    connections: body.connections, protocolVersion: body.protocol ?? 2)
            case "uplink":
                let body = try decoder.decode(UplinkBody.self, from: bytes)
                guard (0...maximumUplinkKbps).contains(body.targetKbps), (0...maximumUplinkKbps).contains(body.estimatedKbps ?? 0) else {
                    throw WireError(.malformed, "uplink rates must be 0 to \(maximumUplinkKbps) kbit/s")
                }
                return .uplink(streamId: body.streamId, targetKbps: body.targetKbps, estimatedKbps: body.estimatedKbps)
            case "ack":
                let body = try decoder.decode(AckBody.self, from: bytes)
                return .ack(streamId: body.streamId, sequence: body.sequence, receivedAt: body.receivedAt)
            case "subscriptionChanged":
                let body = try decoder.decode(SubscriptionChangedBody.self, from: bytes)
                guard body.layers >= 1, body.layers <= 4, body.highestLayer >= 0, body.highestLayer < body.layers else {
                    throw WireError(.malformed, "subscriptionChanged names layer \(body.highestLayer) of \(body.layers)")
                }
                return .subscriptionChanged(
                    streamId: body.streamId, highestLayer: body.highestLayer, layers: body.layers,
                    waitingForKeyframe: body.waitingForKeyframe)
            case "published": return .published(try decoder.decode(StreamInfoBody.self, from: bytes).stream.checkedBounds())
            case "subscribed": return .subscribed(streamId: try decoder.decode(StreamBody.self, from: bytes).streamId)
            case "streamCreated": return .streamCreated(try decoder.decode(StreamInfoBody.self, from: bytes).stream.checkedBounds())
            case "streamDestroyed":
                let body = try decoder.decode(StreamDestroyedBody.self, from: bytes)
                return .streamDestroyed(streamId: body.streamId, reason: body.reason)
            case "connectionCreated": return .connectionCreated(try decoder.decode(ConnectionBody.self, from: bytes).connection)
            case "connectionDestroyed":
                return .connectionDestroyed(connectionId: try decoder.decode(ConnectionIDBody.self, from: bytes).connectionId)
            case "error":
                let body = try decoder.decode(ErrorBody.self, from: bytes)
                return .error(code: WireErrorCode(rawValue: body.code) ?? .internalError, message: body.message)
            default:
                throw WireError(.unknownMessage, "unknown control message type \"\(String(head.type.prefix(64)).escapingControlCharacters)\"")
            }
        } catch let error as WireError {
            throw error
        } catch {
            let problem = DecodingProblem.describe(error, isJSON: true) ?? "it has missing or invalid fields"
            throw WireError(.malformed, "\(String(head.type.prefix(64)).escapingControlCharacters) message: \(problem)")
        }
    }
}

// MARK: JSON bodies

private struct Head: Decodable {
    var v: Int
    var type: String
}

private struct HelloBody: Codable { var token: String; var client: String? }
private struct PublishBody: Codable {
    var name: String?; var properties: StreamProperties; var acks: Bool?; var discardableLayers: Bool?; var refreshes: Bool?
    /// Codec names, checked one by one (``VideoCodec``) so that a wrong one is named.
    var renditions: [String]?
}
private struct StreamBody: Codable { var streamId: UInt32 }
private struct SubscribeBody: Codable {
    var streamId: UInt32; var audio: Bool?; var layers: Bool?; var catchUp: Bool?; var decodes: [String]?
}
private struct RenditionChangedBody: Codable { var streamId: UInt32; var rendition: StreamInfo? }
private struct RenditionCodecBody: Codable { var streamId: UInt32; var codec: VideoCodec }
private struct UplinkBody: Codable { var streamId: UInt32; var targetKbps: Int; var estimatedKbps: Int? }
private struct AckBody: Codable { var streamId: UInt32; var sequence: UInt64; var receivedAt: Double }
private struct SubscriptionChangedBody: Codable {
    var streamId: UInt32
    var highestLayer: Int
    var layers: Int
    var waitingForKeyframe: Bool
}
private struct StreamPropertiesBody: Codable { var streamId: UInt32; var properties: StreamProperties }
private struct WelcomeBody: Codable {
    var connectionId: String
    var sessionId: String
    var role: Role
    var streams: [StreamInfo]
    var connections: [ConnectionInfo]
    /// Absent from relays before protocol 3.
    var `protocol`: Int?
}
private struct StreamInfoBody: Codable { var stream: StreamInfo }
private struct StreamDestroyedBody: Codable { var streamId: UInt32; var reason: String }
private struct ConnectionBody: Codable { var connection: ConnectionInfo }
private struct ConnectionIDBody: Codable { var connectionId: String }
private struct ErrorBody: Codable { var code: String; var message: String }
private struct ArchiveStartedBody: Codable { var archiveId: String; var name: String }
private struct ArchiveStoppedBody: Codable { var archiveId: String; var status: String; var reason: String }

/// `{"v":1,"type":…}` followed by the message's own fields, in one JSON object.
private struct Envelope: Encodable {
    let message: ControlMessage

    private enum Keys: String, CodingKey { case v, type }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(ControlMessage.version, forKey: .v)
        try container.encode(message.type, forKey: .type)
        switch message {
        case .hello(let token, let client): try HelloBody(token: token, client: client).encode(to: encoder)
        case .publish(let name, let properties, let acks, let discardableLayers, let refreshes, let renditions):
            try PublishBody(
                name: name, properties: properties, acks: acks ? true : nil, discardableLayers: discardableLayers ? true : nil,
                refreshes: refreshes ? true : nil, renditions: renditions.isEmpty ? nil : renditions.map(\.rawValue))
                .encode(to: encoder)
        case .publishRendition(let id, let properties):
            try StreamPropertiesBody(streamId: id, properties: properties).encode(to: encoder)
        case .renditionChanged(let id, let rendition): try RenditionChangedBody(streamId: id, rendition: rendition).encode(to: encoder)
        case .startRendition(let id, let codec), .stopRendition(let id, let codec):
            try RenditionCodecBody(streamId: id, codec: codec).encode(to: encoder)
        case .unpublish(let id), .unsubscribe(let id), .requestKeyframe(let id), .requestRefresh(let id), .subscribed(let id):
            try StreamBody(streamId: id).encode(to: encoder)
        case .subscribe(let id, let audio, let layers, let catchUp, let decodes):
            try SubscribeBody(
                streamId: id, audio: audio ? true : nil, layers: layers ? true : nil, catchUp: catchUp ? true : nil, decodes: decodes
            ).encode(to: encoder)
        case .welcome(let connectionId, let sessionId, let role, let streams, let connections, let protocolVersion):
            try WelcomeBody(
                connectionId: connectionId, sessionId: sessionId, role: role, streams: streams, connections: connections,
                protocol: protocolVersion
            ).encode(to: encoder)
        case .uplink(let id, let target, let estimate):
            try UplinkBody(streamId: id, targetKbps: target, estimatedKbps: estimate).encode(to: encoder)
        case .ack(let id, let sequence, let receivedAt):
            try AckBody(streamId: id, sequence: sequence, receivedAt: receivedAt).encode(to: encoder)
        case .subscriptionChanged(let id, let highestLayer, let layers, let waitingForKeyframe):
            try SubscriptionChangedBody(
                streamId: id, highestLayer: highestLayer, layers: layers, waitingForKeyframe: waitingForKeyframe
            ).encode(to: encoder)
        case .published(let stream), .streamCreated(let stream): try StreamInfoBody(stream: stream).encode(to: encoder)
        case .streamDestroyed(let id, let reason): try StreamDestroyedBody(streamId: id, reason: reason).encode(to: encoder)
        case .connectionCreated(let connection): try ConnectionBody(connection: connection).encode(to: encoder)
        case .connectionDestroyed(let id): try ConnectionIDBody(connectionId: id).encode(to: encoder)
        case .error(let code, let message): try ErrorBody(code: code.rawValue, message: message).encode(to: encoder)
        case .signal(let signal): try signal.encode(to: encoder)
        case .streamPropertyChanged(let id, let properties):
            try StreamPropertiesBody(streamId: id, properties: properties).encode(to: encoder)
        case .archiveStarted(let id, let name): try ArchiveStartedBody(archiveId: id, name: name).encode(to: encoder)
        case .archiveStopped(let id, let status, let reason):
            try ArchiveStoppedBody(archiveId: id, status: status, reason: reason).encode(to: encoder)
        }
    }
}
