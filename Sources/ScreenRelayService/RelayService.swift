public import ScreenMedia
public import Logging
public import ScreenRelay
public import ScreenService
public import ServiceLifecycle

/// The relay as a service: its server and the SIGHUP that reads the TLS certificate again, in one
/// `ServiceGroup` that SIGTERM and SIGINT end gracefully.
public enum RelayService {
    /// The group that runs a relay of `configuration`; or why it cannot start (exit 2), as a log line.
    public static func group(_ configuration: RelayConfiguration, logger: Logger) async throws(CommandFailure) -> ServiceGroup {
        let server: RelayServer
        do {
            server = try await RelayServer(configuration: configuration, logger: logger)
        } catch let error as RelayError where error.kind == .badCertificate {
            throw CommandFailure(ExitStatus.cannotStart, "cannot serve HTTPS: \(error.message)")
        } catch {
            let message = (error as? RelayError)?.message ?? String(describing: error)
            throw CommandFailure(ExitStatus.cannotStart, "cannot start: \(message) (data directory \(configuration.dataDirectory ?? ""))")
        }
        let reload = ReloadOnHangup(logger: logger, announcement: "SIGHUP: reading the TLS certificate again") { [logger] in
            switch server.reloadCertificate() {
            case .success(let message): logger.info("\(message)")
            case .failure(let error): logger.error("the TLS certificate stays as it was: \(error.message)")
            }
        }
        // SIGTERM finishes the recordings first, then waits for clients to close for the grace period, then
        // drops those left (a client that reads nothing, or never answers the close, cannot hold it up); past
        // that and 10 s more, the group cancels the services.
        var groupConfiguration = ServiceGroupConfiguration(
            services: [.init(service: server), .init(service: reload)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = .milliseconds(Int(configuration.shutdownGraceSeconds * 1000) + 10_000)
        groupConfiguration.maximumCancellationDuration = .seconds(10)
        return ServiceGroup(configuration: groupConfiguration)
    }

    /// Runs `group` until it ends; why it ended early, as a log line: it could not listen (exit 2, what to change),
    /// or it failed while serving (exit 1).
    public static func run(_ group: ServiceGroup) async throws(CommandFailure) {
        do {
            try await group.run()
        } catch let error as RelayError where error.kind == .cannotListen {
            throw CommandFailure(ExitStatus.cannotStart, "cannot start: \(error.message)")
        } catch {
            throw CommandFailure(ExitStatus.runtimeFailure, "screenrelay stopped: \(String(describing: error))")
        }
    }
}
