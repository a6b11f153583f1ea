import Foundation
import NIOCore
@testable import ScreenRelay
import ScreenTransport
import ScreenWire
import Testing

/// The relay's per-connection protocol, without a transport or a clock: made-up times, made-up verdicts.
struct RelayConnectionTests {
    static let hello = RelayMessage.text(ControlMessage.hello(token: "tok", client: "test").encoded())
    static func grant(_ role: Role, expiresAt: Double) -> SessionGrant {
        SessionGrant(sessionId: "s1", role: role, connectionData: "", expiresAt: Date(timeIntervalSince1970: expiresAt), tokenId: "t")
    }
    static func videoFrame() -> RelayMessage { .binary(ByteBuffer(bytes: videoFrameBytes())) }

    static func videoFrameBytes() -> [UInt8] {
        let header = MediaFrameHeader(
            streamID: 1, sequence: 0, flags: [.keyframe], codec: .vp9, width: 64, height: 48, captureTime: .zero,
            wallClockMilliseconds: 0, metadata: .empty, payloadLength: 3)
        return header.encoded() + [1, 2, 3]
    }

    /// The refusal's error code and close reason, when `actions` is one.
    static func refusal(_ actions: [RelayConnection.Action]) -> (WireErrorCode, String, RelayMetrics.Name?)? {
        guard actions.count == 1, case .refuse(let error, let reason, let counted) = actions[0] else { return nil }
        return (error.kind, reason, counted)
    }

    @Test func helloIsVerifiedThenJoinsAndControlAndMediaGoToTheSession() throws {
        var connection = RelayConnection(now: 1000, helloTimeout: 10)
        #expect(connection.nextDeadline == 1010)
        let verify = connection.received(Self.hello)
        guard case .verify(let token) = try #require(verify.first) else { Issue.record("\(verify)"); return }
        #expect(token == "tok" && connection.state == .verifying && connection.nextDeadline == nil)
        let join = connection.tokenVerdict(.success(Self.grant(.subscriber, expiresAt: 5000)))
        guard case .join(let grant) = try #require(join.first) else { Issue.record("\(join)"); return }
        #expect(grant.role == .subscriber && connection.nextDeadline == 5000)
        #expect(connection.tick(now: 1011).isEmpty, "the hello deadline no longer applies once joined")
        let control = connection.received(.text(ControlMessage.subscribe(streamId: 1).encoded()))
        guard case .control(.subscribe(1, _, _, _, _)) = try #require(control.first) else { Issue.record("\(control)"); return }
        #expect(!connection.isClosing)
        // A viewer's token publishes nothing: its media is refused as not allowed, with what to do instead.
        let refused = Self.refusal(connection.received(Self.videoFrame()))
        #expect(refused?.0 == .forbidden && refused?.1.contains("publisher's token") == true, "\(String(describing: refused))")
    }

    @Test func aPublishersMediaGoesToTheSession() throws {
        var connection = RelayConnection(now: 1000, helloTimeout: 10)
        _ = connection.received(Self.hello)
        _ = connection.tokenVerdict(.success(Self.grant(.publisher, expiresAt: 5000)))
        guard case .video(_, let header) = try #require(connection.received(Self.videoFrame()).first) else { Issue.record("no video"); return }
        #expect(header.streamID == 1 && header.isKeyframe)
        #expect(!connection.isClosing)
    }

    @Test func noHelloInTimeIsRefusedOnceAndNothingAfterCounts() {
        var connection = RelayConnection(now: 1000, helloTimeout: 10)
        #expect(connection.tick(now: 1009.9).isEmpty)
        let refused = Self.refusal(connection.tick(now: 1010))
        #expect(refused?.0 == .badState && refused?.1 == "no hello" && refused?.2 == nil)
        #expect(connection.isClosing && connection.nextDeadline == nil)
        #expect(connection.received(Self.hello).isEmpty)
        #expect(connection.tick(now: 2000).isEmpty)
    }

    @Test func anythingButHelloFirstIsAProtocolError() {
        var text = RelayConnection(now: 0, helloTimeout: 10)
        #expect(Self.refusal(text.received(.text(ControlMessage.subscribe(streamId: 1).encoded())))?.2 == .protocolErrors)
        var binary = RelayConnection(now: 0, helloTimeout: 10)
        #expect(Self.refusal(binary.received(Self.videoFrame()))?.0 == .badState)
        var garbage = RelayConnection(now: 0, helloTimeout: 10)
        #expect(Self.refusal(garbage.received(.text("{not json")))?.0 == .malformed)
    }

    @Test func aRefusedTokenIsCountedAsSuch() {
        var connection = RelayConnection(now: 0, helloTimeout: 10)
        _ = connection.received(Self.hello)
        let refused = Self.refusal(connection.tokenVerdict(.failure(WireError(.tokenExpired, "expired"))))
        #expect(refused?.0 == .tokenExpired && refused?.2 == .rejectedTokens && connection.isClosing)
    }

    /// Viewers are cut off when their token expires; a publisher's stream goes on.
    @Test func aViewerIsCutOffAtItsTokensExpiryAndAPublisherIsNot() {
        var viewer = RelayConnection(now: 0, helloTimeout: 10)
        _ = viewer.received(Self.hello)
        _ = viewer.tokenVerdict(.success(Self.grant(.moderator, expiresAt: 600)))
        #expect(viewer.tick(now: 599).isEmpty)
        let expired = Self.refusal(viewer.tick(now: 600))
        #expect(expired?.0 == .tokenExpired && expired?.1 == "the token expired")
        #expect(viewer.received(Self.videoFrame()).isEmpty, "a closing connection's messages are ignored")

        var publisher = RelayConnection(now: 0, helloTimeout: 10)
        _ = publisher.received(Self.hello)
        _ = publisher.tokenVerdict(.success(Self.grant(.publisher, expiresAt: 600)))
        #expect(publisher.nextDeadline == nil && publisher.tick(now: 100_000).isEmpty)
    }

    /// A session that ends while the client joins: refused as a wrong session, even after the join began.
    @Test func aSessionGoneWhileJoiningIsRefused() {
        var connection = RelayConnection(now: 0, helloTimeout: 10)
        _ = connection.received(Self.hello)
        _ = connection.tokenVerdict(.success(Self.grant(.subscriber, expiresAt: 600)))
        let refused = Self.refusal(connection.tokenVerdict(.failure(ConnectionDriver.sessionGone)))
        #expect(refused?.0 == .wrongSession && connection.isClosing)
    }

    @Test func anOverflowingClientIsDroppedOnceEvenAfterARefusal() {
        var connection = RelayConnection(now: 0, helloTimeout: 10)
        _ = connection.tick(now: 10)
        guard case .drop? = connection.overflowed().first else { Issue.record("not dropped"); return }
        #expect(connection.isDropped && connection.overflowed().isEmpty)
    }

    @Test func aMediaKindOfALaterVersionIsIgnoredAndMalformedMediaRefused() {
        var connection = RelayConnection(now: 0, helloTimeout: 10)
        _ = connection.received(Self.hello)
        _ = connection.tokenVerdict(.success(Self.grant(.publisher, expiresAt: 600)))
        var later = Self.videoFrameBytes()
        (later[2], later[7]) = (2, 9)  // version 2, a kind it does not know
        #expect(connection.received(.binary(ByteBuffer(bytes: later))).isEmpty && !connection.isClosing)
        #expect(Self.refusal(connection.received(.binary(ByteBuffer(bytes: [0, 1]))))?.0 == .malformed)
    }
}
