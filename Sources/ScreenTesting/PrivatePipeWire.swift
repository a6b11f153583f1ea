import Foundation
import ScreenMedia

/// A PipeWire of the test's own: a private runtime directory, a session D-Bus, `pipewire` and `wireplumber`
/// (which links streams to their target nodes), all stopped on deinit. Nothing touches the machine's own
/// session. Clients connect through ``connect()``, which hands out a socket the way the ScreenCast portal's
/// `OpenPipeWireRemote` does.
///
/// The bus starts the system's D-Bus services on demand (xdg-desktop-portal, xdg-permission-store) unless
/// `busActivation` is false. The portal it starts reads its backends from ``portalDirectory`` and picks those
/// meant for the desktop ``portalDesktop``: where ``ScreenCastPortalTestBackend`` registers itself.
public final class PrivatePipeWire: Sendable {
    /// The private `XDG_RUNTIME_DIR`, holding `pipewire-0` and the bus socket.
    public let runtimeDirectory: String
    /// The session bus address of the private dbus-daemon.
    public let busAddress: String
    private let processes: [ChildProcess]
    private let stopped = Locked(false)
    /// Test nodes (producers, tones) to close before the daemons stop.
    private let producers = Locked<[@Sendable () -> Void]>([])

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The environment for programs that should use this PipeWire and this bus.
    public var environment: [String: String] { Self.environment(runtimeDirectory: runtimeDirectory) }
    /// Where the bus-started xdg-desktop-portal looks for `.portal` files.
    public var portalDirectory: String { runtimeDirectory + "/portals" }
    /// The `XDG_CURRENT_DESKTOP` of this session, which selects the portal backends.
    public static let portalDesktop = "screenpubtest"

    static func environment(runtimeDirectory directory: String) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = directory
        environment["PIPEWIRE_RUNTIME_DIR"] = directory
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(directory)/bus"
        environment["XDG_STATE_HOME"] = directory + "/state"
        environment["XDG_CONFIG_HOME"] = directory + "/config"
        environment["XDG_DATA_HOME"] = directory + "/data"
        environment["XDG_DESKTOP_PORTAL_DIR"] = directory + "/portals"
        environment["XDG_CURRENT_DESKTOP"] = portalDesktop
        environment["PIPEWIRE_REMOTE"] = nil
        return environment
    }

    public init(busActivation: Bool = true) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pipewire-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        runtimeDirectory = directory
        busAddress = "unix:path=\(directory)/bus"
        var started: [ChildProcess] = []
        func fail(_ message: String) -> Failure {
            for process in started { process.signal(SIGKILL); process.waitSynchronously(timeout: 5) }
            try? FileManager.default.removeItem(atPath: directory)
            return Failure(description: message)
        }
        let environment = Self.environment(runtimeDirectory: directory)
        for program in ["/usr/bin/dbus-daemon", "/usr/bin/pipewire", "/usr/bin/wireplumber", "/usr/bin/pw-cli"] where access(program, X_OK) != 0 {
            throw fail("\(program) is missing (apt-get install dbus-daemon pipewire pipewire-bin wireplumber)")
        }
        try FileManager.default.createDirectory(atPath: directory + "/portals", withIntermediateDirectories: true)
        // The bus's own configuration: the session bus's policy, and the system's services only when asked.
        let configuration = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(directory)/bus</listen>
              <auth>EXTERNAL</auth>
              \(busActivation ? "<servicedir>/usr/share/dbus-1/services</servicedir>" : "")
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
        try configuration.write(toFile: directory + "/bus.conf", atomically: true, encoding: .utf8)
        started.append(try ChildProcess("/usr/bin/dbus-daemon", ["--config-file=\(directory)/bus.conf", "--nofork"], environment: environment))
        guard try await eventually(10, { FileManager.default.fileExists(atPath: directory + "/bus") }) else {
            throw fail("the private dbus-daemon did not start: \(started[0].errorsSoFar)")
        }
        started.append(try ChildProcess("/usr/bin/pipewire", [], environment: environment))
        guard try await eventually(10, { FileManager.default.fileExists(atPath: directory + "/pipewire-0") }) else {
            throw fail("pipewire did not start: \(started[1].errorsSoFar)")
        }
        started.append(try ChildProcess("/usr/bin/wireplumber", [], environment: environment))
        // Ready when wireplumber is a client of pipewire (it then links new streams to their targets).
        let ready = try await eventually(10) {
            ((try? await ChildProcess.run("/usr/bin/pw-cli", ["ls", "Client"], environment: environment, timeout: 5))?.standardOutput ?? "")
                .contains("WirePlumber")
        }
        guard ready else { throw fail("wireplumber did not start: \(started[2].errorsSoFar)") }
        processes = started
    }

    /// Stops the producers and the daemons (wireplumber, pipewire, the bus, in that order) and waits for them:
    /// for a program about to exit. Tests let deinit do it without waiting.
    public func stop() {
        for process in takeForStopping() {
            process.signal(SIGTERM)
            process.waitSynchronously(timeout: 5)
        }
        try? FileManager.default.removeItem(atPath: runtimeDirectory)
    }

    deinit {
        // On a thread of its own: a deinit runs on a concurrency-pool thread, which must not wait for
        // programs to exit.
        let (processes, directory) = (takeForStopping(), runtimeDirectory)
        guard !processes.isEmpty else { return }
        Thread {
            for process in processes {
                process.signal(SIGTERM)
                process.waitSynchronously(timeout: 5)
            }
            try? FileManager.default.removeItem(atPath: directory)
        }.start()
    }

    /// Closes the producers and hands out the daemons to stop, in stopping order, once.
    private func takeForStopping() -> [ChildProcess] {
        for close in producers.withLock({ producers in defer { producers = [] }; return producers }) { close() }
        return stopped.withLock { stopped in
            defer { stopped = true }
            return stopped ? [] : processes.reversed()
        }
    }

    func closeBeforeStopping(_ close: @escaping @Sendable () -> Void) {
        producers.withLock { $0.append(close) }
    }

    /// Sets variables in the environment of the services this bus starts from now on (a portal and its backends).
    public func updateActivationEnvironment(_ variables: [String: String]) async throws {
        let dictionary = "{" + variables.map { "'\($0.key)': '\($0.value)'" }.joined(separator: ", ") + "}"
        let updated = try await ChildProcess.run(
            "/usr/bin/gdbus",
            ["call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
             "--method", "org.freedesktop.DBus.UpdateActivationEnvironment", dictionary],
            environment: environment)
        guard updated.status == 0 else { throw Failure(description: "gdbus UpdateActivationEnvironment: \(updated.standardError)") }
    }

    /// Starts a desktop's own ScreenCast portal backend and waits until it owns `busName`, then points the portal the
    /// bus starts at the system's backends for `desktop` on `waylandDisplay`: the portal looks for its backends once,
    /// when it starts, so the backend must be on the bus first. Throws with `hint` and the backend's last words.
    func startPortalBackend(
        _ program: String, _ arguments: [String], environment: [String: String], busName: String, desktop: String,
        waylandDisplay: String, hint: String = ""
    ) async throws -> ChildProcess {
        let backend = try ChildProcess(program, arguments, environment: environment)
        guard try await eventually(30, { await self.busNameHasOwner(busName) || backend.hasExited }), !backend.hasExited else {
            backend.endInBackground(signal: SIGKILL)
            throw HeadlessDesktopFailure(description: "\((program as NSString).lastPathComponent) did not start\(hint): \(backend.errorsSoFar.suffix(800))")
        }
        try await updateActivationEnvironment([
            "XDG_CURRENT_DESKTOP": desktop, "WAYLAND_DISPLAY": waylandDisplay, "XDG_DESKTOP_PORTAL_DIR": "/usr/share/xdg-desktop-portal/portals",
        ])
        return backend
    }

    /// Whether a program owns `name` on this bus.
    public func busNameHasOwner(_ name: String) async -> Bool {
        let answer = try? await ChildProcess.run(
            "/usr/bin/gdbus",
            ["call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
             "--method", "org.freedesktop.DBus.NameHasOwner", name],
            environment: environment, timeout: 10)
        return answer?.standardOutput.contains("true") ?? false
    }

    /// A new connection to this PipeWire: a connected socket (the caller owns it).
    public func connect() throws -> Int32 {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array((runtimeDirectory + "/pipewire-0").utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.enumerated() where index < buffer.count - 1 { buffer[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            close(descriptor)
            throw Failure(description: "cannot connect to \(runtimeDirectory)/pipewire-0: errno \(errno)")
        }
        return descriptor
    }
}
