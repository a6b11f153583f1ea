import Foundation
public import Logging
public import ScreenMedia
public import ScreenSession
import ScreenTransport
public import ScreenTransportClient
import ScreenWire
import Synchronization

/// Publishes the share's encoded VP8/VP9 frames into an SFU over WHIP (RFC 9725): an HTTP `POST` of a WebRTC
/// offer (`application/sdp`, `Authorization: Bearer`), the `201` answer and its `Location` (the session's
/// resource, `DELETE`d at the end), then RTP over ICE/DTLS-SRTP from GStreamer's webrtcbin. No re-encode: the
/// frames the relay and files get are the ones sent here.
///
/// The capture thread's ``write(_:)`` hands a frame to webrtcbin's queue when a session is connected and drops
/// it otherwise (never waits). ``run()`` keeps a session up, with the relay transport's backoff; the SFU's
/// keyframe requests (PLI/FIR) reach the encoder through `pictureRequests`. The receiver's RTCP reports (loss,
/// round trip), read from webrtcbin's statistics once a second, drive an ``UplinkController`` whose target goes to
/// the encoder through `pacing`; webrtcbin passes no per-packet feedback (transport-cc) up, so frames are not held
/// back on it, and the rate follows the network at the pace of those reports.
///
/// With `metadata`, each frame's ``WHIPFrameMessage`` goes on a data channel beside the video; with `audio`, the
/// share's Opus goes on a second transceiver, its RTP time on the video's (both from the capture clock).
public final class WHIPPublisher: EncodedFrameSink, ConcurrentAudioSink, @unchecked Sendable {
    // @unchecked: the mutable state is in `state` (a Mutex); the webrtcbin session it names is pushed to and
    // stopped only under `mediaLock`, so a frame never reaches a stopped session; the rest is immutable.
    public let endpoint: String
    let token: String?
    let codec: VideoCodec
    private let pictureRequests: PictureRequests
    private let reconnection: ReconnectStateMachine.Policy
    let http: RelayHTTPClient
    let logger: Logger
    private let finishedEvent = OneShotEvent()
    /// What the sessions' C callbacks reach (one session at a time).
    private let sessionEvents: WHIPSessionEvents
    /// Seconds a new session has to reach "connected" before it counts as failed.
    private let connectTimeout: Double

    private struct State {
        /// The connected webrtcbin session (nil: none).
        var session: WHIPMediaSession?
        var connected = false
        var everConnected = false
        var lastProblem: String?
        var finished = false
        /// ICE servers the endpoint named in its last `201` (`Link: …; rel="ice-server"`), for the next session.
        var learnedIceServers: [String] = []
        var framesSent = 0
        var audioFramesSent = 0
        var uplink: UplinkController?
        /// Said once per publisher: the SFU does not carry the metadata (or the sound) to viewers.
        var toldMetadataLost = false
        var toldAudioLost = false
    }
    private let state = Mutex(State())
    private let mediaLock = NSLock()
    /// Where the controller's target goes to the encoder.
    private let pacing: EncoderPacing.Voice?
    /// The share's sound, sent beside the picture (nil: none).
    let audio: AudioProperties?
    /// Whether frames' metadata goes on a data channel.
    let sendsMetadata: Bool
    /// Seconds after connecting by which the metadata channel should be open; past them the publisher says that the
    /// metadata does not reach viewers.
    static let metadataChannelGrace = 5.0

    /// `endpoint`: the WHIP endpoint as `http(s)://…` (the `whip+` prefix removed).
    public init(
        endpoint: String, token: String?, codec: VideoCodec, pictureRequests: PictureRequests,
        reconnection: ReconnectStateMachine.Policy = .init(), trust: ClientTrust = .system, connectTimeout: Double = 20,
        uplink: UplinkController.Configuration? = nil, pacing: EncoderPacing.Voice? = nil, audio: AudioProperties? = nil,
        metadata: Bool = true, logger: Logger
    ) {
        self.pacing = pacing
        self.audio = audio
        sendsMetadata = metadata
        var initial = State()
        initial.uplink = uplink.map(UplinkController.init)
        state.withLock { $0 = initial }
        self.endpoint = endpoint
        self.token = token
        self.codec = codec
        self.pictureRequests = pictureRequests
        sessionEvents = WHIPSessionEvents(pictureRequests: pictureRequests)
        self.reconnection = reconnection
        http = RelayHTTPClient(trust: trust, peer: "the WHIP endpoint")
        self.connectTimeout = connectTimeout
        self.logger = logger
    }

    /// What `screenpub status` shows.
    public struct Status: Sendable {
        public var connected: Bool
        public var everConnected: Bool
        public var lastProblem: String?
        public var framesSent: Int
        public var keyframeRequestsReceived: Int
        /// The encoder target the receiver's reports led to, and why.
        public var targetKbps: Int?
        public var rateReason: String?
        public var audioFramesSent = 0
        /// Metadata messages handed to the data channel in the current session, and those not sent.
        public var metadataSent: UInt64 = 0
        public var metadataUnsent: UInt64 = 0
    }

    public var status: Status {
        let (current, session) = state.withLock { state in
            (Status(
                connected: state.connected, everConnected: state.everConnected, lastProblem: state.lastProblem,
                framesSent: state.framesSent, keyframeRequestsReceived: sessionEvents.keyframeRequestsReceived.load(ordering: .relaxed),
                targetKbps: state.uplink?.targetKbps, rateReason: state.uplink?.reason.description, audioFramesSent: state.audioFramesSent),
             state.session)
        }
        var status = current
        if let counts = session?.metadataCounts() { (status.metadataSent, status.metadataUnsent) = counts }
        return status
    }

    // MARK: Frames (capture thread)

    public func write(_ frame: EncodedFrame) throws {
        guard frame.codec == codec else {
            throw WHIPError(.wrongCodec, "WHIP carries the codec it offered (\(codec.rawValue)); a \(frame.codec.rawValue) frame cannot be sent")
        }
        mediaLock.lock()
        defer { mediaLock.unlock() }
        guard let session = state.withLock({ $0.connected ? $0.session : nil }) else { return }
        if session.push(frame) { state.withLock { $0.framesSent += 1 } }
    }

    /// Sound from the share's audio thread: sent while a session is connected, dropped otherwise (never waits).
    public func writeAudio(_ frame: EncodedAudioFrame) throws {
        guard audio != nil else { return }
        mediaLock.lock()
        defer { mediaLock.unlock() }
        guard let session = state.withLock({ $0.connected ? $0.session : nil }) else { return }
        if session.pushAudio(frame) { state.withLock { $0.audioFramesSent += 1 } }
    }

    public func finish() throws {
        state.withLock { $0.finished = true }
        finishedEvent.signal()
    }

    // MARK: Sessions

    /// Keeps a WHIP session up until ``finish()``: a failed or lost one is ended (`DELETE`) and made again after
    /// the backoff. Throws when the endpoint refuses for good (a wrong token, an answer without our video).
    public func run() async throws {
        do {
            try await ReconnectStateMachine.keepConnected(
                policy: reconnection, finished: finishedEvent, isFinished: { state.withLock { $0.finished } },
                lastProblem: { state.withLock { $0.lastProblem } },
                recordFailure: { failure in state.withLock { $0.lastProblem = failure.message } },
                logger: logger, connectOnce: sessionOnce)
        } catch let failure as WHIPError {
            state.withLock { $0.lastProblem = failure.message }
            throw failure
        }
    }

    /// One session: offer, answer, media until finished (returns) or lost (throws); always ends it.
    private func sessionOnce() async throws {
        let learned = state.withLock { $0.learnedIceServers }
        let iceServers = learned.isEmpty ? await iceServersFromOptions() : learned
        let session = try await WHIPMediaSession.start(
            codec: codec, audioChannels: audio?.channels ?? 0, metadataChannel: sendsMetadata, iceServers: iceServers, events: sessionEvents)
        let resource = Locked<String?>(nil)
        do {
            try await media(session, resource: resource)
        } catch {
            await end(session, resource: resource.value)
            throw error
        }
        await end(session, resource: resource.value)
    }

    /// Stops the media, then ends the session at the endpoint (`DELETE` of its resource; awaited, so that a share
    /// that stops leaves nothing behind in the SFU).
    private func end(_ session: WHIPMediaSession, resource: String?) async {
        mediaLock.withLock {
            state.withLock { state in
                state.connected = false
                state.session = nil
            }
        }
        session.stop()
        guard let resource else { return }
        do {
            let response = try await http.send("DELETE", resource, bearer: token, body: nil)
            if !(200..<300).contains(response.status) { logger.debug("DELETE \(resource) answered HTTP \(response.status)") }
        } catch {
            logger.debug("DELETE \(resource): \(error.message)")
        }
    }

    /// Negotiates `session` with the endpoint and watches it until the share ends (returns) or it is lost (throws).
    private func media(_ session: WHIPMediaSession, resource: Locked<String?>) async throws {
        let offer = session.offer()
        logger.debug("WHIP offer:\n\(offer)")
        let answer = try await post(offer)
        logger.debug("WHIP answer:\n\(answer.sdp)")
        resource.withLock { $0 = answer.resource }
        // This offer's candidates are gathered already (WHIP here sends no trickle): servers named now serve the
        // next session, after a reconnection.
        if !answer.iceServers.isEmpty {
            let known = state.withLock { state -> Bool in
                defer { state.learnedIceServers = answer.iceServers }
                return state.learnedIceServers == answer.iceServers
            }
            if !known { logger.info("the WHIP endpoint names ICE servers \(answer.iceServers.map(WHIPLink.redacted).joined(separator: ", ")); used from the next session") }
        }
        try Self.checkAnswer(answer.sdp, codec: codec, endpoint: endpoint)
        let accepted = WHIPAnswer.acceptedMedia(in: answer.sdp)
        if sendsMetadata, !accepted.contains("application") { tellMetadataLost("its answer refuses the data channel") }
        if audio != nil, !accepted.contains("audio") {
            warnOnce(\.toldAudioLost, "the WHIP endpoint at \(endpoint) refused the sound (no audio in its answer): viewers get the picture alone")
        }
        do {
            try session.setAnswer(answer.sdp)
        } catch {
            throw WHIPError(.unusableAnswer, "the WHIP endpoint at \(endpoint) answered with SDP webrtcbin cannot use: \(error.message)")
        }
        state.withLock { $0.session = session }
        // Connected within the time limit, then watched until it drops or the share ends: woken by webrtcbin's state
        // changes (and errors), by the share finishing, or when the watch looks again (connecting, RTCP silence).
        let clock = ContinuousClock()
        let start = clock.now
        func now() -> Double { (clock.now - start) / .seconds(1) }
        var watch = WHIPConnectionWatch(endpoint: endpoint, now: now(), connectTimeout: connectTimeout)
        while true {
            // Armed before the state is read: a change from here on wakes the wait below.
            let changed = session.events.armChange()
            if state.withLock({ $0.finished }) { return }
            var wait = Duration.seconds(WHIPConnectionWatch.reportInterval)
            for action in watch.observe(session.peerState(), secondsSinceRTCP: session.secondsSinceRTCP(), now: now()) {
                switch action {
                case .connected:
                    state.withLock { state in
                        state.connected = true
                        state.everConnected = true
                        state.lastProblem = nil
                    }
                    logger.info("publishing to \(endpoint) over WHIP (\(codec.rawValue)); resource \(answer.resource ?? "without a Location")")
                    // Receivers start from a keyframe.
                    pictureRequests.requestKeyframe()
                case .heardFirstReport:
                    logger.debug("the SFU's first RTCP arrived; it is watched for silence")
                case .followReceiverReports:
                    followReceiverReports(session)
                    if sendsMetadata, case .connected(let since, _) = watch.state, now() - since > Self.metadataChannelGrace,
                        session.metadataChannelState() != .open
                    {
                        tellMetadataLost("its data channel did not open within \(Int(Self.metadataChannelGrace)) s of connecting")
                    }
                case .wait(let seconds):
                    wait = .milliseconds(Int(seconds * 1000))
                case .lose(let message):
                    throw WHIPError(.connection, message)
                }
            }
            let lookAgain = wait
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await changed.wait(upTo: lookAgain) }
                group.addTask { await self.finishedEvent.wait(upTo: lookAgain) }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// Says once, for the publisher's life, that the frames' metadata does not reach the SFU's viewers (the picture
    /// still goes).
    private func tellMetadataLost(_ why: String) {
        warnOnce(\.toldMetadataLost, "the frame metadata does not reach viewers through \(endpoint): \(why) (the picture is shared without it)")
    }

    /// Logs `message` the first time `told` is found false, and sets it.
    private func warnOnce(_ told: WritableKeyPath<State, Bool>, _ message: @autoclosure () -> String) {
        guard state.withLock({ state in defer { state[keyPath: told] = true }; return !state[keyPath: told] }) else { return }
        logger.warning("\(message())")
    }

    /// Feeds the receiver's latest report (through webrtcbin's statistics) to the uplink controller and its target
    /// to the encoder.
    private func followReceiverReports(_ session: WHIPMediaSession) {
        guard state.withLock({ $0.uplink != nil }), let report = session.receiverReport() else { return }
        let now = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
        let target = state.withLock { state -> Int? in
            let changed = state.uplink?.receiverReport(
                fractionLost: report.fractionLost, roundTripMilliseconds: report.roundTripMilliseconds, bytesSent: report.bytesSent, now: now) ?? false
            if changed, let uplink = state.uplink { logger.debug("WHIP: target \(uplink.targetKbps) kbit/s (\(uplink.reason.description))") }
            return state.uplink?.targetKbps
        }
        if let target { pacing?.setTarget(kbps: target) }
    }
}
