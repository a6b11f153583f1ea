import Logging
import ServiceLifecycle

/// Sends keyframe requests the router held back for its throttle, every 100 ms, and removes the sessions
/// that have been empty too long, every minute at most. Every 10 s: a word when file descriptors run short, freed
/// memory back to the system, and the sampled gauges refreshed for a metrics factory besides `/metrics`.
struct SessionHousekeeping: Service {
    let registry: SessionRegistry
    let emptySessionExpiry: Duration
    let store: RelayStore?
    let metrics: RelayMetrics
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            let sweepEvery = min(Duration.seconds(60), max(Duration.milliseconds(100), emptySessionExpiry / 4))
            var lastSweep = ContinuousClock.now
            var lastDescriptorCheck = ContinuousClock.now
            var lastTrim = ContinuousClock.now
            let nearLimit = RateLimitedLog(logger: logger)
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(100))
                for hub in await registry.all { await hub.tick() }
                // Accept errors (EMFILE) are backed off by NIO without a word; this says why, once a minute.
                if ContinuousClock.now - lastDescriptorCheck >= .seconds(10) {
                    lastDescriptorCheck = .now
                    if let (open, limit) = DescriptorLimit.use(), open * 10 >= limit * 9 {
                        nearLimit.log("\(open) of \(limit) file descriptors are open: new connections may fail (raise LimitNOFILE, or lower max-connections)")
                    }
                }
                // Memory freed by connections that came and went in their thousands goes back to the system, not
                // only to malloc's free lists: RSS comes down after a flood instead of staying at its peak.
                if ContinuousClock.now - lastTrim >= .seconds(10) {
                    lastTrim = .now
                    MemoryTrim.returnFreedMemory()
                    metrics.refreshSamples()
                }
                guard ContinuousClock.now - lastSweep >= sweepEvery else { continue }
                lastSweep = .now
                let removed = await registry.removeIdle(for: emptySessionExpiry)
                guard !removed.isEmpty else { continue }
                logger.info("\(removed.count) session(s) removed after \(emptySessionExpiry) without a client: \(removed.joined(separator: ", "))")
                do { try store?.deleteSessions(removed) } catch { logger.error("the removed sessions stay in the index: \(error)") }
            }
        }
    }
}
