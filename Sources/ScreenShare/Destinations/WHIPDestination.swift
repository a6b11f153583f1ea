import Foundation
public import ScreenMedia
import ScreenSession
import ScreenTransport
import ScreenWHIP

/// An SFU that takes WHIP (RFC 9725): `whip+https://sfu.example.org/whip/room` (`whip+http://` for a test
/// bench), with `--whip-token`. Janus (behind a WHIP front), LiveKit's WHIP ingress, MediaMTX, SRS, Cloudflare.
/// The same encoded VP8/VP9/H.264 frames as every other destination, over WebRTC, with each frame's metadata on a
/// data channel beside them and the share's Opus sound (`--audio`) on the video's clock; archives and chat stay with
/// screenrelay.
public struct WHIPDestination: StreamDestination {
    let publisher: WHIPPublisher

    public static let kind = DestinationKind(.whip, schemes: ["whip+http", "whip+https"]) { url, context in
        let endpoint = String(url.dropFirst("whip+".count))
        guard let codec = context.videoCodec, codec != .av1 else {
            throw ShareError(
                .cannotStart,
                "\(url): WHIP carries VP8, VP9 or H.264 here (GStreamer 1.22 has no AV1 RTP payloader): give --codec vp9, vp8 or h264")
        }
        return WHIPDestination(
            publisher: WHIPPublisher(
                endpoint: endpoint, token: context.options.whipToken, codec: codec, pictureRequests: context.pictureRequests,
                reconnection: context.options.reconnect ? .init() : .never, trust: context.options.trust,
                uplink: UplinkController.Configuration(maximumKbps: context.bitrateKbps), pacing: context.pacing.addVoice(),
                audio: context.audio, logger: context.logger))
    }

    public var endpoint: String { "whip+" + publisher.endpoint }

    public func makeSink() throws -> any EncodedFrameSink { publisher }

    public func run() async throws { try await publisher.run() }

    public var status: DestinationStatus {
        let current = publisher.status
        var status = DestinationStatus(
            kind: .whip, endpoint: endpoint, connected: current.connected, everConnected: current.everConnected,
            lastProblem: current.lastProblem, framesSent: current.framesSent, keyframeRequests: current.keyframeRequestsReceived)
        (status.targetKbps, status.rateReason) = (current.targetKbps, current.rateReason)
        return status
    }
}
