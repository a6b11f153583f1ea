import Foundation
import NIOCore

/// All sessions of a relay.
actor SessionRegistry {
    private var hubs: [String: SessionHub] = [:]
    private let metrics: RelayMetrics
    private let publishersMaySignal: Bool
    private let archiveGrace: Duration
    private let limits: StreamRouter<ByteBuffer>.Limits
    private let alwaysHLS: HLSPackager.Configuration?

    init(
        metrics: RelayMetrics, limits: StreamRouter<ByteBuffer>.Limits = .init(), publishersMaySignal: Bool = true,
        archiveGrace: Duration = .seconds(10), alwaysHLS: HLSPackager.Configuration? = nil
    ) {
        self.alwaysHLS = alwaysHLS
        self.metrics = metrics
        self.limits = limits
        self.publishersMaySignal = publishersMaySignal
        self.archiveGrace = archiveGrace
    }

    /// A new session, or (`id` given) one the relay knew before a restart.
    func create(id: String = SessionRegistry.newIdentifier(), title: String = "", createdAt: Date = Date()) -> SessionHub {
        let hub = SessionHub(
            sessionId: id, title: title, createdAt: createdAt, metrics: metrics, limits: limits, publishersMaySignal: publishersMaySignal, archiveGrace: archiveGrace,
            alwaysHLS: alwaysHLS)
        hubs[id] = hub
        metrics.set(.sessions, hubs.count)
        return hub
    }

    /// A new session, unless `limit` sessions exist.
    func create(limit: Int, title: String) -> SessionHub? {
        hubs.count < limit ? create(title: title) : nil
    }

    /// Removes the sessions that have had no client and no recording for `duration`; returns their ids.
    func removeIdle(for duration: Duration) async -> [String] {
        var removed: [String] = []
        for (id, hub) in hubs where await hub.hasBeenIdle(for: duration) {
            hubs[id] = nil
            removed.append(id)
        }
        metrics.set(.sessions, hubs.count)
        return removed
    }

    func hub(_ id: String) -> SessionHub? { hubs[id] }

    var all: [SessionHub] { Array(hubs.values) }

    /// Random, URL-safe, unguessable identifiers (128 bits).
    static func newIdentifier() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(format: "%08x", UInt32.random(in: 0...UInt32.max, using: &generator)) }.joined()
    }
}
