import Foundation
import ScreenMedia

/// GNOME's compositor, mutter, running headless with one virtual monitor on a ``PrivatePipeWire`` (its private
/// runtime directory, session bus and PipeWire): the real producer of Wayland screen casts, with no GPU and no
/// display. Clients draw on it (``showTestWindow(clock:)``), and ``screenCast(cursorMode:)`` records its monitor
/// through mutter's own ScreenCast and RemoteDesktop D-Bus API, with a virtual pointer to move.
public final class HeadlessMutter: Sendable {
    public let pipewire: PrivatePipeWire
    public let width: Int
    public let height: Int
    private let compositor: ChildProcess
    private let clients = Locked<[ChildProcess]>([])

    public typealias Failure = HeadlessDesktopFailure

    /// The environment of a Wayland client of this compositor (and of this session's bus and PipeWire).
    public var environment: [String: String] {
        var environment = pipewire.environment
        environment["WAYLAND_DISPLAY"] = "wayland-0"
        environment["GDK_BACKEND"] = "wayland"
        environment["DISPLAY"] = nil
        return environment
    }

    /// Starts mutter; throws a ``Failure`` that says why when it is not installed or does not come up. With
    /// `portal`, the bus starts the real ScreenCast portal on demand with GNOME's backend
    /// (xdg-desktop-portal-gnome), whose "Screen Share" dialog appears on the monitor.
    public init(width: Int = 1280, height: Int = 720, portal: Bool = false) async throws {
        guard access("/usr/bin/mutter", X_OK) == 0 else {
            throw Failure(
                description: "mutter is not installed (apt-get install mutter xdg-desktop-portal-gnome gir1.2-gtk-3.0)", cannotStart: true)
        }
        self.width = width
        self.height = height
        pipewire = try await PrivatePipeWire(busActivation: portal)
        var environment = pipewire.environment
        environment["DISPLAY"] = nil
        environment["WAYLAND_DISPLAY"] = nil
        compositor = try ChildProcess(
            "/usr/bin/mutter", ["--headless", "--virtual-monitor", "\(width)x\(height)", "--wayland", "--no-x11"],
            environment: environment)
        let socket = pipewire.runtimeDirectory + "/wayland-0"
        guard try await eventually(20, { FileManager.default.fileExists(atPath: socket) || self.compositor.hasExited }),
            !compositor.hasExited
        else {
            compositor.signal(SIGKILL)
            throw Failure(description: "mutter did not start: \(compositor.errorsSoFar.suffix(800))", cannotStart: true)
        }
        if portal {
            // Services the bus starts get its environment: GNOME's portal backend, drawing on this compositor.
            try await pipewire.updateActivationEnvironment([
                "XDG_CURRENT_DESKTOP": "GNOME", "WAYLAND_DISPLAY": "wayland-0", "GDK_BACKEND": "wayland",
                "XDG_DESKTOP_PORTAL_DIR": "/usr/share/xdg-desktop-portal/portals",
            ])
        }
    }

    /// Turns the monitor a quarter (mutter's DisplayConfig, as the Displays settings do): the monitor becomes
    /// height × width, and mutter ends the screen casts of it.
    public func rotateMonitor() async throws {
        let destination = ["--session", "--dest", "org.gnome.Mutter.DisplayConfig", "--object-path", "/org/gnome/Mutter/DisplayConfig"]
        let state = try await ChildProcess.run(
            "/usr/bin/gdbus", ["call"] + destination + ["--method", "org.gnome.Mutter.DisplayConfig.GetCurrentState"], environment: environment)
        // "(uint32 SERIAL, [(('Meta-0', …), [('1280x720@60.000', …": the serial, the connector and its mode.
        let output = state.standardOutput
        guard let serial = output.firstMatch(of: /^\(uint32 (\d+),/)?.1,
            let monitor = output.firstMatch(of: /\(\('([^']+)'.*?\[\('([^']+)'/)
        else { throw Failure(description: "mutter's display state is not as expected: \(output.prefix(300)) \(state.standardError)") }
        let configuration = "[(0, 0, 1.0, 1, true, [('\(monitor.1)', '\(monitor.2)', {})])]"
        let applied = try await ChildProcess.run(
            "/usr/bin/gdbus",
            ["call"] + destination + ["--method", "org.gnome.Mutter.DisplayConfig.ApplyMonitorsConfig", String(serial), "1", configuration, "{}"],
            environment: environment)
        guard applied.status == 0 else { throw Failure(description: "mutter refused the new configuration: \(applied.standardError)") }
    }

    /// A fullscreen GTK window, left half red and right half blue (``red``, ``blue``); with `clock`, a white
    /// 16×16 block near the top-left corner moves every second. Returns once it was drawn.
    public func showTestWindow(clock: Bool = false) async throws {
        let window = try await GTKTestWindow.show(environment: environment, clock: clock)
        clients.withLock { $0.append(window) }
    }

    public static let red = GTKTestWindow.red
    public static let blue = GTKTestWindow.blue

    /// How the pointer reaches a screen cast: mutter's `cursor-mode`.
    public enum CursorMode: Int, Sendable {
        case hidden = 0, embedded = 1, metadata = 2
    }

    /// A screen cast of the monitor, ready once mutter has made its PipeWire node.
    public func screenCast(cursorMode: CursorMode) async throws -> MutterScreenCast {
        let cast = try MutterScreenCast(environment: environment, cursorMode: cursorMode, directory: pipewire.runtimeDirectory)
        try await cast.waitForNode()
        return cast
    }

    /// Ends the compositor at once, as a crash would.
    public func kill() {
        compositor.signal(SIGKILL)
    }

    /// Ends the clients, mutter and the session, and waits for them: for a program about to exit. Tests let
    /// deinit do it without waiting.
    public func stop() {
        for process in clients.withLock({ $0 }) + [compositor] {
            process.signal(SIGTERM)
            process.waitSynchronously(timeout: 5)
        }
        pipewire.stop()
    }

    deinit {
        for client in clients.withLock({ $0 }) { client.endInBackground(signal: SIGTERM) }
        compositor.endInBackground(signal: SIGTERM)
    }
}

