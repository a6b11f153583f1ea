import CWHIPShims
import Foundation
import ScreenMedia
import Synchronization

/// A started webrtcbin session, owned once: stopped (and the reference its keyframe callback holds released)
/// by ``stop()`` or, at the latest, when the last reference goes. The only holder of the C session: the rest of
/// WHIP speaks to it through these methods, in Swift types.
final class WHIPMediaSession: @unchecked Sendable {
    // @unchecked: the C session takes pushes (under the publisher's `mediaLock`) and state queries from any
    // thread (GStreamer locks inside); `stopped` is only touched under `lock`.
    private let pointer: OpaquePointer
    /// What its C callbacks reach.
    let events: WHIPSessionEvents
    private let context: Unmanaged<WHIPSessionEvents>
    private let lock = NSLock()
    private var stopped = false

    init(pointer: OpaquePointer, context: Unmanaged<WHIPSessionEvents>, hasMetadataChannel: Bool) {
        self.pointer = pointer
        self.hasMetadataChannel = hasMetadataChannel
        self.context = context
        events = context.takeUnretainedValue()
    }

    /// Stops the media and frees the session; later calls do nothing.
    func stop() {
        let first = lock.withLock {
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        CWHIP_stop(pointer)
        context.release()
    }

    deinit { stop() }

    /// The SDP offer, its candidates gathered (WHIP here sends no trickle).
    func offer() -> String { String(cString: CWHIP_offer(pointer)) }

    /// Hands the endpoint's answer to webrtcbin; throws webrtcbin's reason when it cannot use it.
    func setAnswer(_ sdp: String) throws(WHIPError) {
        var error = [CChar](repeating: 0, count: 512)
        guard CWHIP_set_answer(pointer, sdp, &error, error.count) == 0 else {
            throw WHIPError(.unusableAnswer, String(nullTerminated: error))
        }
    }

    /// Hands one encoded frame to webrtcbin's queue, and with a metadata channel its ``WHIPFrameMessage``; whether it
    /// took it (a frame captured before the session's pipeline started is not).
    func push(_ frame: EncodedFrame) -> Bool {
        let payload = frame.payload.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let capture = Self.nanoseconds(frame.captureTime)
        guard hasMetadataChannel else {
            return CWHIP_push(pointer, payload, frame.payload.count, frame.isKeyframe ? 1 : 0, capture, nil, 0, 0) == 0
        }
        let message = WHIPFrameMessage(wallClock: frame.wallClock, isKeyframe: frame.isKeyframe, metadata: frame.metadata).encoded()
        return CWHIP_push(
            pointer, payload, frame.payload.count, frame.isKeyframe ? 1 : 0, capture, message, message.count, WHIPFrameMessage.timestampOffset) == 0
    }

    /// Hands one Opus packet to webrtcbin's sound queue; whether it took it.
    func pushAudio(_ frame: EncodedAudioFrame) -> Bool {
        let samples = Int32(clamping: frame.samples)
        return CWHIP_push_audio(
            pointer, frame.payload.baseAddress?.assumingMemoryBound(to: UInt8.self), frame.payload.count, Self.nanoseconds(frame.captureTime),
            samples) == 0
    }

    /// A capture time in CLOCK_MONOTONIC nanoseconds (the pipeline's clock); -1 when it cannot be one.
    static func nanoseconds(_ time: MediaTime) -> Int64 {
        let nanoseconds = Int128(time.value) * Int128(MediaTime.nanosecondTimescale) / Int128(time.timescale)
        return Int64(exactly: nanoseconds) ?? -1
    }

    /// Whether the session offered a metadata data channel.
    let hasMetadataChannel: Bool

    /// The metadata channel's state: not open yet (or none), open, closed.
    func metadataChannelState() -> WHIPMetadataChannelState {
        switch CWHIP_metadata_channel_state(pointer) {
        case 1: .open
        case 2: .closed
        default: .notOpen
        }
    }

    /// Metadata messages sent on the data channel so far, and those not sent.
    func metadataCounts() -> (sent: UInt64, unsent: UInt64) {
        var sent: UInt64 = 0, unsent: UInt64 = 0
        CWHIP_metadata_counts(pointer, &sent, &unsent)
        return (sent, unsent)
    }

    /// The peer connection's state now (a pipeline error reads as failed, with its text).
    func peerState() -> WHIPConnectionWatch.PeerState {
        var error = [CChar](repeating: 0, count: 512)
        let state = Int(CWHIP_state(pointer, &error, error.count))
        switch state {
        case Int(CWHIP_STATE_CONNECTED): return .connected
        case Int(CWHIP_STATE_DISCONNECTED): return .disconnected
        case Int(CWHIP_STATE_CLOSED): return .closed
        case Int(CWHIP_STATE_FAILED): return .failed(detail: String(nullTerminated: error))
        case Int(CWHIP_STATE_CONNECTING): return .connecting
        default: return .new
        }
    }

    /// Seconds since the SFU last sent RTCP; nil before the first.
    func secondsSinceRTCP() -> Double? {
        let seconds = CWHIP_seconds_since_rtcp(pointer)
        return seconds >= 0 ? seconds : nil
    }

    /// What the receiver's last RTCP report said, through webrtcbin's statistics (waits for them); nil before it
    /// has reported.
    func receiverReport() -> WHIPReceiverReport? {
        var report = CWHIPReceiverReport()
        guard CWHIP_receiver_report(pointer, &report) == 0 else { return nil }
        return WHIPReceiverReport(
            fractionLost: report.fraction_lost, roundTripMilliseconds: report.round_trip_seconds >= 0 ? report.round_trip_seconds * 1000 : nil,
            bytesSent: report.bytes_sent)
    }

    /// Starts webrtcbin's media for `codec` (and Opus of `audioChannels`, 0: none; a metadata data channel when
    /// `metadataChannel`) with `iceServers`; its callbacks reach `events`.
    static func start(
        codec: VideoCodec, audioChannels: Int = 0, metadataChannel: Bool = false, iceServers: [String], events: WHIPSessionEvents
    ) async throws -> WHIPMediaSession {
        let extras = CWHIPExtras(audio_channels: Int32(clamping: audioChannels), metadata_channel: metadataChannel ? 1 : 0)
        let context = Unmanaged.passRetained(events)
        let codecNumber: Int32 = switch codec {
        case .vp8: 8
        case .h264: 264
        case .vp9, .av1: 9
        }
        let stun = iceServers.first { $0.hasPrefix("stun://") }
        let turns = iceServers.filter { $0.hasPrefix("turn://") || $0.hasPrefix("turns://") }
        let opaque = UInt(bitPattern: context.toOpaque())
        // Gathering may take seconds (a STUN server): on a thread of its own, not the concurrency pool.
        let started: Result<UInt, WHIPError> = await withCheckedContinuation { continuation in
            Thread {
                var error = [CChar](repeating: 0, count: 512)
                let made = withCStrings(turns) { turnPointers in
                    CWHIP_start(
                        codecNumber, extras, stun, turnPointers, turns.count, 10_000,
                        { pointer in
                            guard let pointer else { return }
                            let events = Unmanaged<WHIPSessionEvents>.fromOpaque(pointer).takeUnretainedValue()
                            events.keyframeRequestsReceived.add(1, ordering: .relaxed)
                            events.pictureRequests.requestKeyframe()
                        },
                        { pointer in
                            guard let pointer else { return }
                            Unmanaged<WHIPSessionEvents>.fromOpaque(pointer).takeUnretainedValue().stateChanged()
                        }, UnsafeMutableRawPointer(bitPattern: opaque), &error, error.count)
                }
                if let made {
                    continuation.resume(returning: .success(UInt(bitPattern: made)))
                } else {
                    continuation.resume(returning: .failure(WHIPError(.connection, String(nullTerminated: error))))
                }
            }.start()
        }
        switch started {
        case .success(let address):
            guard let pointer = OpaquePointer(bitPattern: address) else {
                context.release()
                throw WHIPError(.connection, "webrtcbin started no session")
            }
            return WHIPMediaSession(pointer: pointer, context: context, hasMetadataChannel: metadataChannel)
        case .failure(let error):
            context.release()
            throw error
        }
    }
}

/// Where the frame metadata's data channel is.
enum WHIPMetadataChannelState: Sendable, Equatable {
    case notOpen, open, closed
}

/// What a WebRTC receiver's RTCP reports say, as the uplink controller takes them.
struct WHIPReceiverReport: Sendable, Equatable {
    /// Of the packets since its previous report, the share lost (0–1).
    var fractionLost: Double
    /// Round trip from our sender report to its receiver report; nil when unknown.
    var roundTripMilliseconds: Double?
    /// RTP bytes sent so far.
    var bytesSent: UInt64
}

/// What the C callbacks reach: the share's picture requests and the count `screenpub status` shows; and the
/// event a state change signals (a new one armed before each look at the state).
final class WHIPSessionEvents: Sendable {
    let pictureRequests: PictureRequests
    let keyframeRequestsReceived = Atomic<Int>(0)
    private let change = Mutex(OneShotEvent())
    init(pictureRequests: PictureRequests) { self.pictureRequests = pictureRequests }

    func armChange() -> OneShotEvent {
        change.withLock { event in
            event = OneShotEvent()
            return event
        }
    }

    func stateChanged() { change.withLock { $0 }.signal() }
}

/// Calls `body` with `strings` as a C array of C strings that live for the call.
private func withCStrings<Result>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> Result) -> Result {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    let pointers = copies.map { UnsafePointer($0) }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
}
