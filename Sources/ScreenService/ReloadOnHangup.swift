public import Logging
public import ServiceLifecycle
import UnixSignals

/// Runs `reload` on each SIGHUP until the group shuts down (the settings read again, a renewed certificate).
public struct ReloadOnHangup: Service {
    let logger: Logger
    let announcement: String
    let reload: @Sendable () -> Void

    public init(logger: Logger, announcement: String, reload: @escaping @Sendable () -> Void) {
        self.logger = logger
        self.announcement = announcement
        self.reload = reload
    }

    public func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            for await _ in hangups {
                logger.info("\(announcement)")
                reload()
            }
        }
    }
}
