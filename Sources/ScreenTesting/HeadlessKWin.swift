import Foundation
import ScreenMedia

/// KDE's compositor, KWin, headless (`kwin_wayland --virtual`, llvmpipe) on a ``PrivatePipeWire``, with KDE's
/// ScreenCast portal backend, xdg-desktop-portal-kde, on the bus before the portal starts.
///
/// What it takes, and what it cannot do:
/// - `/usr/bin/kwin_wayland` carries a file capability (`cap_sys_resource`) that a container's bounding set may
///   lack, and then cannot be executed at all; a plain copy of it, without the capability, runs.
/// - KDE's dialog is a QML window: with no input device it cannot be answered here, so grants are seeded in the
///   permission store as the portal keeps them after a "Share" (``seedGrant(token:window:)``,
///   `Tests/Fixtures/kde-seed-grant.py`), and the restore path is what is tested.
/// - KWin 5.27's virtual outputs never report a rendered frame (its virtual backend emits no `outputChange`),
///   so a cast of a whole output sends no picture at all; a window's cast follows the window's own damage and
///   works. Real outputs (the DRM backend) report their frames.
public final class HeadlessKWin: Sendable {
    public let pipewire: PrivatePipeWire
    public let width: Int
    public let height: Int
    private let compositor: ChildProcess
    private let portalBackend: ChildProcess
    private let clients = Locked<[ChildProcess]>([])

    public typealias Failure = HeadlessDesktopFailure

    static let portalBackendCandidates = [
        "/usr/lib/x86_64-linux-gnu/libexec/xdg-desktop-portal-kde", "/usr/lib/aarch64-linux-gnu/libexec/xdg-desktop-portal-kde",
        "/usr/libexec/xdg-desktop-portal-kde",
    ]

    /// The environment of a Wayland client of this compositor (and of this session's bus and PipeWire).
    public var environment: [String: String] {
        var environment = pipewire.environment
        environment["WAYLAND_DISPLAY"] = "wayland-0"
        environment["XDG_CURRENT_DESKTOP"] = "KDE"
        environment["GDK_BACKEND"] = "wayland"
        environment["QT_QPA_PLATFORM"] = "wayland"
        environment["DISPLAY"] = nil
        return environment
    }

    public init(width: Int = 640, height: Int = 480) async throws {
        guard access("/usr/bin/kwin_wayland", R_OK) == 0,
            let portalProgram = Self.portalBackendCandidates.first(where: { access($0, X_OK) == 0 })
        else {
            throw Failure(description: "KWin or its portal is not installed (apt-get install kwin-wayland xdg-desktop-portal-kde qtwayland5)", cannotStart: true)
        }
        self.width = width
        self.height = height
        let kwin = try await Self.copyWithoutFileCapabilities()
        pipewire = try await PrivatePipeWire(busActivation: true)
        var kwinEnvironment = pipewire.environment
        kwinEnvironment["XDG_CURRENT_DESKTOP"] = "KDE"
        kwinEnvironment["DISPLAY"] = nil
        kwinEnvironment["WAYLAND_DISPLAY"] = nil
        compositor = try ChildProcess(
            kwin,
            ["--virtual", "--width", String(width), "--height", String(height), "--socket", "wayland-0", "--no-lockscreen",
             "--no-global-shortcuts", "--no-kactivities"],
            environment: kwinEnvironment)
        let socket = pipewire.runtimeDirectory + "/wayland-0"
        let compositor = compositor
        guard try await eventually(30, { FileManager.default.fileExists(atPath: socket) || compositor.hasExited }), !compositor.hasExited else {
            compositor.signal(SIGKILL)
            throw Failure(description: "KWin did not start: \(compositor.errorsSoFar.suffix(800))", cannotStart: true)
        }
        var backendEnvironment = pipewire.environment
        backendEnvironment["WAYLAND_DISPLAY"] = "wayland-0"
        backendEnvironment["XDG_CURRENT_DESKTOP"] = "KDE"
        backendEnvironment["QT_QPA_PLATFORM"] = "wayland"
        do {
            portalBackend = try await pipewire.startPortalBackend(
                portalProgram, [], environment: backendEnvironment, busName: "org.freedesktop.impl.portal.desktop.kde", desktop: "KDE",
                waylandDisplay: "wayland-0", hint: " (is qtwayland5 installed?)")
        } catch {
            compositor.endInBackground(signal: SIGTERM)
            throw error
        }
    }

    public func showTestWindow(clock: Bool = false) async throws {
        let window = try await GTKTestWindow.show(environment: environment, clock: clock)
        clients.withLock { $0.append(window) }
    }

    /// KWin's ids of its windows (`{uuid}`) whose caption contains `caption`, as a KWin script lists them.
    public func windowIDs(caption: String) async throws -> [String] {
        let script = pipewire.runtimeDirectory + "/list-windows-\(UUID().uuidString.prefix(8)).js"
        let marker = "screenpub-window"
        try """
            const windows = workspace.clientList();
            for (var i = 0; i < windows.length; i++) { print("\(marker) " + windows[i].internalId + " " + windows[i].caption); }
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let scripting = ["--session", "--dest", "org.kde.KWin", "--object-path", "/Scripting"]
        let loaded = try await ChildProcess.run(
            "/usr/bin/gdbus", ["call"] + scripting + ["--method", "org.kde.kwin.Scripting.loadScript", script, (script as NSString).lastPathComponent],
            environment: environment)
        guard loaded.status == 0 else { throw Failure(description: "KWin did not load the script: \(loaded.standardError)") }
        _ = try await ChildProcess.run("/usr/bin/gdbus", ["call"] + scripting + ["--method", "org.kde.kwin.Scripting.start"], environment: environment)
        var found: [String] = []
        _ = try await eventually(10) {
            found = self.compositor.errorsSoFar.split(separator: "\n").compactMap { line in
                guard let match = line.firstMatch(of: /screenpub-window (\{[0-9a-f-]+\}) (.*)/), match.2.contains(caption) else { return nil }
                return String(match.1)
            }
            return !found.isEmpty
        }
        return found
    }

    /// Seeds a grant of `window` (a ``windowIDs(caption:)`` id) or, when nil, of the whole output under `token`.
    public func seedGrant(token: String, window: String?) async throws {
        let outcome = try await ChildProcess.run(
            "/usr/bin/python3", [TestFixtures.directory + "/kde-seed-grant.py", token, window == nil ? "output" : "window", window ?? "0x0"],
            environment: environment)
        guard outcome.status == 0 else { throw Failure(description: "the grant was not seeded: \(outcome.standardError)") }
    }

    /// A copy of `kwin_wayland` without its file capability, made once per test process. Named `kwin_wayland`
    /// still: KWin's own Qt platform plugin loads only into a program of that name.
    private static func copyWithoutFileCapabilities() async throws -> String {
        try await MadeOnce.file("kwin_wayland", in: "screenpub-kwin") { partial in
            // cp without --preserve leaves extended attributes, the capability among them, behind.
            let copied = try await ChildProcess.run("/bin/cp", ["/usr/bin/kwin_wayland", partial])
            guard copied.status == 0 else {
                throw Failure(description: "cannot copy kwin_wayland: \(copied.standardError)", cannotStart: true)
            }
        }
    }

    deinit {
        for client in clients.withLock({ $0 }) { client.endInBackground(signal: SIGTERM) }
        portalBackend.endInBackground(signal: SIGTERM)
        compositor.endInBackground(signal: SIGTERM)
    }
}
