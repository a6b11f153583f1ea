import CWHIPShims
import Foundation
import Logging
import ScreenMedia
import ScreenSession
import ScreenTransport
import ScreenTransportClient
import ScreenWire
import Synchronization

/// A started webrtcbin session, owned once: stopped (and the reference its keyframe callback holds released)
/// by ``stop()`` or, at the latest, when the last reference goes.
final class WHIPMediaSession: @unchecked Sendable {
    // @unchecked: the C session takes pushes (under the publisher's `mediaLock`) and state queries from any
    // thread (GStreamer locks inside); `stopped` is only touched under `lock`.
    let pointer: OpaquePointer
    /// What its C callbacks reach.
    let events: WHIPSessionEvents
    private let context: Unmanaged<WHIPSessionEvents>
    private let lock = NSLock()
    private var stopped = false

    init(pointer: OpaquePointer, context: Unmanaged<WHIPSessionEvents>) {
        self.pointer = pointer
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

    /// Starts webrtcbin's media for `codec` with `iceServers`; its callbacks reach `events`.
    static func start(codec: VideoCodec, iceServers: [String], events: WHIPSessionEvents) async throws -> WHIPMediaSession {
        let context = Unmanaged.passRetained(events)
        let codecNumber: Int32 = codec == .vp8 ? 8 : 9
        let stun = iceServers.first { $0.hasPrefix("stun://") }
        let turns = iceServers.filter { $0.hasPrefix("turn://") || $0.hasPrefix("turns://") }
        let opaque = UInt(bitPattern: context.toOpaque())
        // Gathering may take seconds (a STUN server): on a thread of its own, not the concurrency pool.
        let started: Result<UInt, WHIPError> = await withCheckedContinuation { continuation in
            Thread {
                var error = [CChar](repeating: 0, count: 512)
                let made = withCStrings(turns) { turnPointers in
                    CWHIP_start(
                        codecNumber, stun, turnPointers, turns.count, 10_000,
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
            return WHIPMediaSession(pointer: pointer, context: context)
        case .failure(let error):
            context.release()
            throw error
        }
    }
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
