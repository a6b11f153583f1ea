package import NIOCore

/// A TCP socket as the one sending on it sees it: what the kernel knows of it (``LinkSample``), and the rate its
/// sending is paced at. The relay has one per subscriber, read on the socket's event loop; the publisher one for
/// its uplink (``RelayOutbound/socket``), read through ``sample()``.
public struct LinkControl: Sendable {
    /// Where the socket lives: the relay reads the links of one loop together there.
    package let eventLoop: any EventLoop
    /// `TCP_INFO` now; only on ``eventLoop``.
    package let sampleOnLoop: @Sendable () -> LinkSample?
    /// Paces the socket at most at this many bytes a second (nil: unpaced).
    public let pace: @Sendable (_ bytesPerSecond: Double?) async -> Void

    package init(
        eventLoop: any EventLoop, sampleOnLoop: @escaping @Sendable () -> LinkSample?,
        pace: @escaping @Sendable (_ bytesPerSecond: Double?) async -> Void
    ) {
        self.eventLoop = eventLoop
        self.sampleOnLoop = sampleOnLoop
        self.pace = pace
    }

    /// What the kernel knows of the socket now, read on its loop; nil when it cannot say.
    public func sample() async -> LinkSample? {
        try? await eventLoop.submit(sampleOnLoop).get()
    }

    /// `channel`'s socket.
    package static func socket(_ channel: any Channel) -> LinkControl {
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
