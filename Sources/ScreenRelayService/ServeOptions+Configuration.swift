import Foundation
public import ScreenMedia
public import ScreenRelay
public import ScreenService
import ScreenTransportClient

extension ServeOptions {
    /// The relay these options describe, with `secret` and its archives in `dataDirectory`.
    public func relayConfiguration(secret: String, dataDirectory: String) -> RelayConfiguration {
        var configuration = RelayConfiguration(
            host: host, port: port, secret: secret, publicURL: publicURL, publishersMaySignal: publisherSignals,
            dataDirectory: dataDirectory, archiveGraceSeconds: archiveGrace)
        configuration.allowedHosts = allowedHost
        configuration.shutdownGraceSeconds = shutdownGrace
        configuration.archiveLimits = ArchiveLimits(
            recordingBytes: Int64(archiveMaxSize) << 20, sessionBytes: Int64(archiveSessionQuota) << 20, relayBytes: Int64(archiveQuota) << 20,
            freeSpaceBytes: Int64(archiveFreeSpace) << 20)
        configuration.tls = tlsCert.map { RelayTLSFiles(certificateChain: $0, privateKey: tlsKey ?? "") }
        (configuration.maximumConnections, configuration.maximumConnectionsPerAddress) = (maxConnections, maxConnectionsPerAddress)
        (configuration.maximumSessions, configuration.emptySessionExpirySeconds) = (maxSessions, emptySessionExpiry)
        configuration.idleTimeoutSeconds = idleTimeout
        (configuration.requestHeadTimeoutSeconds, configuration.messageDeadlineSeconds) = (requestTimeout, messageDeadline)
        (configuration.maximumRequestLineBytes, configuration.maximumRequestHeaderBytes) = (maxRequestLine, maxRequestHeaders)
        configuration.maximumControlMessageSize = maxControlMessage
        (configuration.maximumQueuedControlMessages, configuration.maximumQueuedControlBytes) = (maxQueuedMessages, maxQueuedControlBytes)
        (configuration.maximumQueuedBytes, configuration.maximumRelayQueuedBytes) = (maxQueuedBytes, maxRelayQueuedBytes)
        (configuration.signalsPerSecond, configuration.signalBurst) = (signalsPerSecond, signalBurst)
        configuration.sessionSignalsPerSecond = sessionSignalsPerSecond
        (configuration.subscriberThinMilliseconds, configuration.subscriberQueueMilliseconds) = (subscriberThin, subscriberQueue)
        configuration.subscriberFitInMilliseconds = subscriberFitIn
        (configuration.subscriberKeyframeIntervalSeconds, configuration.subscriberStallSeconds) = (subscriberKeyframeInterval, subscriberStall)
        configuration.subscriberKeyframeCeilingSeconds = subscriberKeyframeCeiling
        configuration.subscriberKeyframeRequests = subscriberKeyframeRequests
        (configuration.maximumStreamsPerConnection, configuration.maximumStreamNameBytes) = (maxStreamsPerConnection, maxStreamName)
        (configuration.maximumStreamsPerSession, configuration.maximumFramesPerSecond) = (maxStreamsPerSession, maxFramesPerSecond)
        configuration.hlsSessionMemoryBytes = hlsSessionMemory << 20
        (configuration.maximumStreamsPerToken, configuration.maximumConnectionsPerToken) = (maxStreamsPerToken, maxConnectionsPerToken)
        configuration.maximumConnectionsPerSession = maxConnectionsPerSession
        (configuration.maximumViewerConnectionsPerToken, configuration.reservedSeats) = (maxViewerConnectionsPerToken, reservedSeats)
        configuration.trustedProxies = trustProxy
        configuration.metricsToken = metricsToken.flatMap { $0.isEmpty ? nil : $0 }
        configuration.hlsSegmentSeconds = hlsSegment
        // A part at most half a segment long (--hls-segment 0.6: 0.3 s parts).
        configuration.hlsPartSeconds = hlsPart ?? min(configuration.hlsPartSeconds, hlsSegment / 2)
        configuration.hlsWaitingRequestsPerClient = hlsWaitingPerClient
        configuration.hlsPushURL = hlsPush
        var pushClient = RelayHTTPClient(peer: "the HLS origin")
        pushClient.timeoutSeconds = 10
        configuration.hlsPushClient = pushClient
        configuration.hlsDirectory = hlsDir.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        return configuration
    }

    /// The relay these options describe in `environment`: its secret read (``RelaySecret``), its data directory
    /// defaulted, the `--hls-dir` made and found writable; or why it cannot start (exit 2), as a log line.
    public func relayConfiguration(environment: [String: String]) throws(CommandFailure) -> RelayConfiguration {
        let secret: String
        switch RelaySecret.read(secretFile: secretFile, environment: environment) {
        case .success(let read): secret = read
        case .failure(let problem): throw CommandFailure(ExitStatus.cannotStart, "cannot start: \(problem.message)")
        }
        let dataDirectory = dataDir ?? RelayConfiguration.defaultDataDirectory(application: "screenrelay", environment: environment)
        let configuration = relayConfiguration(secret: secret, dataDirectory: dataDirectory)
        if let directory = configuration.hlsDirectory {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            guard access(directory, W_OK | X_OK) == 0 else {
                throw CommandFailure(ExitStatus.cannotStart, "cannot write HLS to \(directory): \(String(cString: strerror(errno))) (--hls-dir)")
            }
        }
        return configuration
    }

    /// This machine's relay settings as the relay reads them (its configuration file, `SCREENRELAY_*` and
    /// `commandLine`): where the admin commands find the relay and its secret. Whatever is wrong in them is a
    /// ``ServiceError`` saying where.
    public static func read(commandLine: [String]) throws(ServiceError) -> ServeOptions {
        let layers = try LayeredArguments.read(command: ServeOptions.self, application: "screenrelay", commandLine: commandLine)
        do {
            let options = try parse(layers.arguments)
            try options.check()
            return options
        } catch {
            let message = self.message(for: error)
            throw ServiceError(.badConfiguration, layers.explain(message) ?? message)
        }
    }
}
