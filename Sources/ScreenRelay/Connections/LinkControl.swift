import NIOCore

/// A subscriber's TCP socket as its session sees it: what the kernel knows of it (``LinkSample``), read on the
/// socket's event loop, and the rate its sending is paced at.
struct LinkControl: Sendable {
    /// Where the socket lives: the links of one loop are read together there (``SubscriberLinks/sample(_:)``).
    let eventLoop: any EventLoop
    /// `TCP_INFO` now; only on ``eventLoop``.
    let sampleOnLoop: @Sendable () -> LinkSample?
    /// Paces the socket at most at this many bytes a second (nil: unpaced).
    let pace: @Sendable (_ bytesPerSecond: Double?) async -> Void

    /// `channel`'s socket.
    static func socket(_ channel: any Channel) -> LinkControl {
        LinkControl(
            eventLoop: channel.eventLoop, sampleOnLoop: { LinkSample.readOnLoop(channel) },
            pace: { await pace(channel, bytesPerSecond: $0) })
    }

    /// `SO_MAX_PACING_RATE`: Linux then paces the connection's packets itself (TCP's internal pacing, without the
    /// fq qdisc), so that a frame enters a thin link's bottleneck no faster than it drains, instead of as a burst
    /// that overflows a short queue there and is sent again.
    private static func pace(_ channel: any Channel, bytesPerSecond: Double?) async {
        #if os(Linux)
        guard let provider = channel as? any SocketOptionProvider else { return }
        // Never below 4 KB/s (a bad measure must not stall the connection); ~0 (UInt32.max) is unpaced.
        var rate = UInt32.max
        if let bytesPerSecond, bytesPerSecond.isFinite { rate = UInt32(max(4096, min(bytesPerSecond, Double(UInt32.max - 1)))) }
        _ = try? await provider.unsafeSetSocketOption(level: .socket, name: .init(rawValue: 47), value: rate).get()  // SO_MAX_PACING_RATE
        #endif
    }
}
