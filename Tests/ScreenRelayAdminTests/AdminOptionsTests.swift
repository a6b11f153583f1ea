import ArgumentParser
import Foundation
import ScreenRelayAdmin
import ScreenMedia
import ScreenRelayService
import ScreenService
import Testing

/// Where the admin commands find the relay and its secret, without a relay: this machine's relay settings as
/// made-up values, the secret in the environment given.
struct AdminOptionsTests {
    static let secret = String(repeating: "s", count: 32)
    static let environment = ["SCREENRELAY_SECRET": secret, "HOME": "/nonexistent"]

    static func server(admin: [String] = [], relay: [String]) throws -> String {
        try AdminOptions.parse(admin).client(environment: environment, localRelay: { _ in try ServeOptions.parse(relay) }).server
    }

    static func failure(admin: [String], environment: [String: String] = environment, localRelay: @escaping ([String]) throws -> ServeOptions)
        throws -> CommandFailure?
    {
        let options = try AdminOptions.parse(admin)
        do {
            _ = try options.client(environment: environment, localRelay: localRelay)
            return nil
        } catch {
            return error
        }
    }

    struct Broken: Error, CustomStringConvertible {
        var description: String { "config.toml line 2: --port must be between 0 and 65535" }
    }

    @Test func theRelayOfThisMachineIsReachedWhereItListens() throws {
        #expect(try Self.server(relay: []) == "http://127.0.0.1:8090")
        #expect(try Self.server(relay: ["--port", "9000", "--host", "0.0.0.0"]) == "http://127.0.0.1:9000")
        #expect(try Self.server(relay: ["--host", "::"]) == "http://[::1]:8090")
        #expect(try Self.server(relay: ["--host", "fd00::5"]) == "http://[fd00::5]:8090")
        #expect(try Self.server(relay: ["--host", "10.0.0.2", "--tls-cert", "c", "--tls-key", "k"]) == "https://10.0.0.2:8090")
        #expect(try Self.server(relay: ["--public-url", "https://relay.example.org"]) == "https://relay.example.org")
        #expect(try Self.server(admin: ["--server", "http://elsewhere:1"], relay: ["--port", "9000"]) == "http://elsewhere:1")
    }

    @Test func theRelaysConfigurationFileIsTheOneAskedFor() throws {
        let asked = Locked<[String]>([])
        _ = try AdminOptions.parse(["--config", "/etc/screenrelay.toml"]).client(environment: Self.environment) { commandLine in
            asked.withLock { $0 = commandLine }
            return try ServeOptions.parse([])
        }
        #expect(asked.value == ["--config", "/etc/screenrelay.toml"])
    }

    @Test func brokenSettingsAreSaidWhenTheyAreNeeded() throws {
        let unreadable = try Self.failure(admin: []) { _ in throw Broken() }
        #expect(unreadable?.kind == ExitStatus.runtimeFailure)
        #expect(
            unreadable?.message
                == "the relay's settings cannot be read, so its address and secret are not known (config.toml line 2: --port must be between 0 and 65535); fix them or give --server and --secret-file")
        // Given both, the settings are not needed.
        let secretFile = FileManager.default.temporaryDirectory.appendingPathComponent("admin-secret-\(UUID().uuidString)").path
        try Self.secret.write(toFile: secretFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: secretFile) }
        #expect(try Self.failure(admin: ["--server", "http://relay:8090", "--secret-file", secretFile]) { _ in throw Broken() } == nil)
    }

    @Test func aMissingSecretOrCertificateAuthorityIsSaid() throws {
        let noSecret = try Self.failure(admin: [], environment: ["HOME": "/nonexistent"]) { _ in try ServeOptions.parse([]) }
        #expect(noSecret?.kind == ExitStatus.runtimeFailure && noSecret?.message.hasPrefix("no relay secret is set") == true)
        let fromRelay = try Self.failure(admin: []) { _ in try ServeOptions.parse(["--secret-file", "/nonexistent/secret"]) }
        #expect(fromRelay?.message == "cannot read the relay secret from /nonexistent/secret: there is no such file")
        let badAuthority = try Self.failure(admin: ["--ca-file", "/nonexistent/ca.pem"]) { _ in try ServeOptions.parse([]) }
        #expect(badAuthority?.message.hasPrefix("--ca-file: ") == true, "\(String(describing: badAuthority))")
    }

    @Test func aServerThatIsNoURLIsRefused() {
        #expect(throws: (any Error).self) { try AdminOptions.parse(["--server", "relay:8090"]) }
        do {
            _ = try AdminOptions.parse(["--server", "relay:8090"])
        } catch {
            #expect(AdminOptions.message(for: error) == "--server must be an http:// or https:// URL, got 'relay:8090'")
        }
    }
}
