import ArgumentParser
import Foundation
import ScreenRelay
import ScreenRelayService
import ScreenService
import Testing

/// `screenrelay serve`'s options without a relay: their defaults are the relay's, they map onto its configuration,
/// and what cannot run is refused in a sentence.
struct ServeOptionsTests {
    static func options(_ arguments: [String]) throws -> ServeOptions { try ServeOptions.parse(arguments) }

    static func refusal(_ arguments: [String]) -> String {
        do {
            try ServeOptions.parse(arguments).check()
            return ""
        } catch {
            return ServeOptions.message(for: error)
        }
    }

    @Test func noOptionsIsTheRelaysOwnConfiguration() throws {
        let configuration = try Self.options([]).relayConfiguration(secret: "s", dataDirectory: "/d")
        let defaults = RelayConfiguration.defaults
        #expect(configuration.host == defaults.host && configuration.port == defaults.port)
        #expect(configuration.maximumConnections == defaults.maximumConnections)
        #expect(configuration.maximumConnectionsPerAddress == defaults.maximumConnectionsPerAddress)
        #expect(configuration.maximumSessions == defaults.maximumSessions)
        #expect(configuration.emptySessionExpirySeconds == defaults.emptySessionExpirySeconds)
        #expect(configuration.idleTimeoutSeconds == defaults.idleTimeoutSeconds)
        #expect(configuration.requestHeadTimeoutSeconds == defaults.requestHeadTimeoutSeconds)
        #expect(configuration.maximumRequestLineBytes == defaults.maximumRequestLineBytes)
        #expect(configuration.maximumRequestHeaderBytes == defaults.maximumRequestHeaderBytes)
        #expect(configuration.messageDeadlineSeconds == defaults.messageDeadlineSeconds)
        #expect(configuration.maximumControlMessageSize == defaults.maximumControlMessageSize)
        #expect(configuration.maximumQueuedBytes == defaults.maximumQueuedBytes)
        #expect(configuration.maximumRelayQueuedBytes == defaults.maximumRelayQueuedBytes)
        #expect(configuration.shutdownGraceSeconds == defaults.shutdownGraceSeconds)
        #expect(configuration.archiveGraceSeconds == defaults.archiveGraceSeconds)
        #expect(configuration.publishersMaySignal == defaults.publishersMaySignal)
        #expect(configuration.hlsSegmentSeconds == defaults.hlsSegmentSeconds)
        #expect(configuration.hlsPartSeconds == defaults.hlsPartSeconds)
        #expect(configuration.hlsSessionMemoryBytes == defaults.hlsSessionMemoryBytes)
        #expect(configuration.hlsWaitingRequestsPerClient == defaults.hlsWaitingRequestsPerClient)
        let limits = ArchiveLimits()
        #expect(configuration.archiveLimits.recordingBytes == limits.recordingBytes)
        #expect(configuration.archiveLimits.sessionBytes == limits.sessionBytes)
        #expect(configuration.archiveLimits.relayBytes == limits.relayBytes)
        #expect(configuration.archiveLimits.freeSpaceBytes == limits.freeSpaceBytes)
        let router = RouterLimits()
        #expect(configuration.subscriberThinMilliseconds == router.thinAboveMilliseconds)
        #expect(configuration.subscriberQueueMilliseconds == router.maximumQueuedMilliseconds)
        #expect(configuration.subscriberStallSeconds == router.stallSeconds)
        #expect(configuration.maximumFramesPerSecond == router.maximumFramesPerSecond)
        #expect(configuration.maximumStreamsPerToken == router.tokenShares.streamsPerToken)
        #expect(configuration.maximumStreamNameBytes == router.maximumStreamNameBytes)
        #expect(configuration.tls == nil && configuration.metricsToken == nil && configuration.hlsDirectory == nil)
        #expect(configuration.secret == "s" && configuration.dataDirectory == "/d")
    }

    @Test func optionsMapOntoTheConfigurationInItsUnits() throws {
        let configuration = try Self.options([
            "--port", "9000", "--archive-max-size", "10", "--hls-session-memory", "3", "--hls-segment", "0.6", "--metrics-token", "",
            "--tls-cert", "c.pem", "--tls-key", "k.pem", "--trust-proxy", "127.0.0.1", "--hls-dir", "relative/../hls", "--no-publisher-signals",
        ]).relayConfiguration(secret: "s", dataDirectory: "/d")
        #expect(configuration.port == 9000)
        #expect(configuration.archiveLimits.recordingBytes == 10 << 20)
        #expect(configuration.hlsSessionMemoryBytes == 3 << 20 && configuration.hlsRelayMemoryBytes == 8 * (3 << 20))
        // The part is half a segment shorter than a second.
        #expect(configuration.hlsSegmentSeconds == 0.6 && configuration.hlsPartSeconds == 0.3)
        #expect(configuration.metricsToken == nil, "an empty token is no token")
        #expect(configuration.tls?.certificateChain == "c.pem" && configuration.tls?.privateKey == "k.pem")
        #expect(configuration.trustedProxies == ["127.0.0.1"] && !configuration.publishersMaySignal)
        #expect(configuration.hlsDirectory == FileManager.default.currentDirectoryPath + "/hls")
        let part = try Self.options(["--hls-part", "0.25"]).relayConfiguration(secret: "s", dataDirectory: "/d")
        #expect(part.hlsPartSeconds == 0.25 && part.hlsSegmentSeconds == 6)
    }

    @Test func valuesItCannotRunWithAreRefusedInASentence() {
        #expect(Self.refusal(["--port", "70000"]) == "--port must be between 0 and 65535, got 70000")
        #expect(Self.refusal(["--log-format", "xml"]) == "--log-format must be text or json, got 'xml'")
        #expect(Self.refusal(["--tls-cert", "c.pem"]) == "--tls-cert and --tls-key go together: the certificate and its private key")
        #expect(Self.refusal(["--trust-proxy", "proxy.example"]).hasPrefix("--trust-proxy takes the proxy's IP address"))
        #expect(Self.refusal(["--hls-segment", "40"]) == "--hls-segment must be between 0.5 and 30 seconds, got 40.0")
        #expect(Self.refusal(["--hls-part", "2", "--hls-segment", "3"]).hasPrefix("--hls-part must be between 0.1 and 2 seconds"))
        #expect(Self.refusal(["--hls-waiting-per-client", "0"]) == "--hls-waiting-per-client must be 1 to 500, got 0")
        #expect(Self.refusal(["--max-streams-per-session", "33"]).hasPrefix("the limits must be positive"))
        #expect(Self.refusal(["--archive-quota", "0"]).hasPrefix("--archive-max-size, --archive-session-quota and --archive-quota"))
        #expect(Self.refusal(["--public-url", "relay.example"]) == "--public-url must be an http:// or https:// URL, got 'relay.example'")
        #expect(Self.refusal(["--hls-push", "ftp://x"]) == "--hls-push must be an http:// or https:// URL, got 'ftp://x'")
        #expect(Self.refusal([]) == "")
    }

    @Test func withoutASecretTheRelayCannotStart() throws {
        let options = try Self.options(["--secret-file", "/nonexistent/secret"])
        #expect(throws: CommandFailure.self) { try options.relayConfiguration(environment: [:]) }
        do {
            _ = try options.relayConfiguration(environment: [:])
        } catch {
            #expect(error.kind == ExitStatus.cannotStart)
            #expect(error.message == "cannot start: cannot read the relay secret from /nonexistent/secret: there is no such file")
        }
        let secretFile = FileManager.default.temporaryDirectory.appendingPathComponent("secret-\(UUID().uuidString)").path
        try String(repeating: "k", count: 40).write(toFile: secretFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: secretFile) }
        let started = try Self.options(["--secret-file", secretFile]).relayConfiguration(environment: ["XDG_STATE_HOME": "/state"])
        #expect(started.secret == String(repeating: "k", count: 40) && started.dataDirectory == "/state/screenrelay")
    }

    @Test func theRelaysSettingsReadForTheAdminCommandsSayWhereTheyAreWrong() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("relay-\(UUID().uuidString).toml").path
        try "port = 9001\nhost = \"0.0.0.0\"\n".write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let read = try ServeOptions.read(commandLine: ["--config", file])
        #expect(read.port == 9001 && read.host == "0.0.0.0")
        try "port = 70000\n".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(throws: ServiceError.self) { try ServeOptions.read(commandLine: ["--config", file]) }
        do {
            _ = try ServeOptions.read(commandLine: ["--config", file])
        } catch {
            #expect(error.kind == .badConfiguration)
            #expect(error.message.contains("\(file) line 1") && error.message.contains("--port must be between 0 and 65535"), "\(error)")
        }
    }
}
