package import NIOCore

/// What the kernel knows of a TCP connection (`TCP_INFO`): how fast it delivers, and how much sent data it still
/// holds (not yet sent, or sent and not yet acknowledged: in the network's queues). The relay reads it of its
/// subscribers' sockets, the publisher of its own uplink: what an application's writes were taken by says nothing
/// of what lies below the socket's buffers.
public struct LinkSample: Sendable, Equatable {
    /// Bytes per second the connection delivered lately (the kernel's rate sampler), when it was not limited
    /// by having nothing to send; nil otherwise.
    public var deliveryBytesPerSecond: Double?
    /// Bytes written and not yet acknowledged by the peer: not yet sent, and sent in whole segments.
    public var pendingBytes: Int
    /// Bytes the peer has acknowledged since the connection began: while it stays the same, nothing was delivered,
    /// and the kernel's delivery rate is the one it last measured, not a new measure.
    public var acknowledgedBytes: UInt64
    /// The peer has shut its sending side or reset the connection (the socket is in CLOSE_WAIT or CLOSE, or past
    /// them): it says nothing more on it.
    public var peerClosed: Bool

    /// Linux's `struct tcp_info` as raw bytes (232 of them on this kernel; a larger buffer is fine).
    private typealias RawInfo = (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
        UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
        UInt64, UInt64, UInt64, UInt64, UInt64)

    /// `TCP_INFO` of `channel`'s socket, read now: only on the channel's event loop, where it is a plain
    /// `getsockopt` with no hop; nil for a channel without a socket or on an older kernel.
    package static func readOnLoop(_ channel: any Channel) -> LinkSample? {
        #if os(Linux)
        guard let provider = channel as? any SocketOptionProvider else { return nil }
        channel.eventLoop.preconditionInEventLoop()
        var sample: LinkSample?
        let read: EventLoopFuture<RawInfo> = provider.unsafeGetSocketOption(level: .tcp, name: .init(rawValue: 11))  // TCP_INFO
        // On its loop the read is done when it returns, and so this runs now.
        read.assumeIsolated().whenSuccess { raw in sample = withUnsafeBytes(of: raw) { LinkSample(tcpInfo: $0) } }
        return sample
        #else
        return nil
        #endif
    }

    /// Fields at their offsets in `struct tcp_info` (linux/tcp.h, a stable ABI): tcpi_state (0), tcpi_snd_mss (16), tcpi_unacked
    /// (24, in segments), tcpi_bytes_acked (120), tcpi_notsent_bytes (144), tcpi_delivery_rate (160), and the
    /// delivery rate's app-limited bit (byte 7, bit 0). Counts too large to add up say "all of it" rather than trap.
    package init?(tcpInfo bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 168 else { return nil }
        let mss = Int(bytes.loadUnaligned(fromByteOffset: 16, as: UInt32.self))
        let unacked = Int(bytes.loadUnaligned(fromByteOffset: 24, as: UInt32.self))
        let notSent = Int(bytes.loadUnaligned(fromByteOffset: 144, as: UInt32.self))
        let rate = bytes.loadUnaligned(fromByteOffset: 160, as: UInt64.self)
        acknowledgedBytes = bytes.loadUnaligned(fromByteOffset: 120, as: UInt64.self)
        let appLimited = bytes[7] & 1 != 0
        // linux/tcp_states.h: CLOSE 7, CLOSE_WAIT 8, LAST_ACK 9, CLOSING 11 (and TIME_WAIT 6) follow a peer's FIN or reset.
        peerClosed = switch bytes[0] {
        case 6, 7, 8, 9, 11: true
        default: false
        }
        let inFlight = unacked.multipliedReportingOverflow(by: mss)
        let pending = notSent.addingReportingOverflow(inFlight.partialValue)
        pendingBytes = inFlight.overflow || pending.overflow ? .max : pending.partialValue
        deliveryBytesPerSecond = !appLimited && rate > 0 ? Double(rate) : nil
    }

    public init(deliveryBytesPerSecond: Double?, pendingBytes: Int, acknowledgedBytes: UInt64 = 0, peerClosed: Bool = false) {
        self.deliveryBytesPerSecond = deliveryBytesPerSecond
        self.pendingBytes = pendingBytes
        self.acknowledgedBytes = acknowledgedBytes
        self.peerClosed = peerClosed
    }
}
