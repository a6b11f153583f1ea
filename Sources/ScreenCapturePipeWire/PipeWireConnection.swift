import CPipeWire
import CPipeWireShims
import Foundation
import ScreenMedia

/// A private PipeWire loop, context and connection to the daemon, for the one thread that iterates the loop
/// (the video capture thread, the audio thread): what each capture stream is made on. Released on deinit,
/// after the stream that used it.
final class PipeWireConnection {
    let loop: UnsafeMutablePointer<pw_loop>
    let context: OpaquePointer
    let core: OpaquePointer

    private static let initialized: Void = { pw_init(nil, nil) }()

    /// Connects through `remote`; `what` names the capture in the error when no daemon answers.
    init(remote: PipeWireRemote, capturing what: String) throws(PipeWireCaptureError) {
        _ = Self.initialized
        guard let loop = pw_loop_new(nil) else { throw PipeWireCaptureError(.noDaemon, "cannot create a PipeWire loop") }
        guard let context = pw_context_new(loop, nil, 0) else {
            pw_loop_destroy(loop)
            throw PipeWireCaptureError(.noDaemon, "cannot create a PipeWire context")
        }
        let core: OpaquePointer?
        switch remote {
        case .default: core = pw_context_connect(context, nil, 0)
        case .fileDescriptor(let descriptor): core = pw_context_connect_fd(context, descriptor, nil, 0)
        }
        guard let core else {
            let reason = String(cString: strerror(errno))
            pw_context_destroy(context)
            pw_loop_destroy(loop)
            let route = if case .fileDescriptor(let descriptor) = remote { "file descriptor \(descriptor)" } else { "the default socket ($XDG_RUNTIME_DIR/pipewire-0)" }
            throw PipeWireCaptureError(
                .noDaemon,
                "cannot capture \(what): no PipeWire daemon answers through \(route) (\(reason)); is the pipewire daemon running? (`systemctl --user status pipewire`)")
        }
        self.loop = loop
        self.context = context
        self.core = core
    }

    deinit {
        pw_core_disconnect(core)
        pw_context_destroy(context)
        pw_loop_destroy(loop)
    }

    /// Runs `body` with the loop entered by this thread (PipeWire's callbacks happen inside ``iterate(timeoutMilliseconds:)``).
    func whileEntered<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        CPipeWireShims_loopEnter(loop)
        defer { CPipeWireShims_loopLeave(loop) }
        return try body()
    }

    /// Dispatches what PipeWire has, waiting up to `timeoutMilliseconds`.
    func iterate(timeoutMilliseconds: Int32) throws(PipeWireCaptureError) {
        let result = CPipeWireShims_loopIterate(loop, timeoutMilliseconds)
        if result < 0 && result != -EINTR {
            throw PipeWireCaptureError(.streamFailed, "the PipeWire loop failed: \(String(cString: strerror(-result)))")
        }
    }
}

@available(*, unavailable, message: "belongs to the thread that iterates its loop")
extension PipeWireConnection: Sendable {}

/// A node as PipeWire's registry lists it.
struct PipeWireNode: Sendable, Hashable {
    var id: UInt32
    /// `object.serial`: what a stream's `target.object` names when it is a number (ids are reused, serials not).
    var serial: UInt64?
    /// `node.name`.
    var name: String?
    /// `media.class`: `Audio/Sink`, `Audio/Source`, `Stream/Output/Audio`, `Video/Source`, …
    var mediaClass: String?

    /// An output: capturing it means capturing its monitor, what it plays.
    var isSink: Bool { mediaClass?.hasSuffix("/Sink") == true }
    var carriesSound: Bool { mediaClass?.contains("Audio") == true }
}

extension PipeWireConnection {
    /// Every node the registry lists now: one round trip to the daemon. Call it with the loop entered.
    func nodes(timeoutMilliseconds: Int = 5000) throws(PipeWireCaptureError) -> [PipeWireNode] {
        guard let list = CPipeWireShims_listNodes(core) else {
            throw PipeWireCaptureError(.streamFailed, "cannot read PipeWire's list of nodes")
        }
        defer { CPipeWireShims_freeNodeList(list) }
        let clock = MonotonicClock()
        let deadline = clock.nanoseconds(fromTicks: clock.now()) + UInt64(timeoutMilliseconds) * 1_000_000
        while !CPipeWireShims_nodeListComplete(list) {
            try iterate(timeoutMilliseconds: 50)
            guard clock.nanoseconds(fromTicks: clock.now()) < deadline else {
                throw PipeWireCaptureError(.streamFailed, "PipeWire did not list its nodes within \(timeoutMilliseconds / 1000) s")
            }
        }
        return (0..<CPipeWireShims_nodeListCount(list)).map { index in
            let entry = CPipeWireShims_nodeListEntry(list, index)
            return PipeWireNode(
                id: entry.id, serial: entry.serial == UInt64.max ? nil : entry.serial, name: entry.name.map { String(cString: $0) },
                mediaClass: entry.mediaClass.map { String(cString: $0) })
        }
    }
}
