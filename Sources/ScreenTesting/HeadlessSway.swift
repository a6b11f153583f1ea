import Foundation
import ScreenMedia

/// A wlroots desktop, headless: sway with one virtual output on a ``PrivatePipeWire`` (its runtime directory,
/// session bus and PipeWire), with its own ScreenCast portal backend, xdg-desktop-portal-wlr, on the bus before
/// the portal starts. Clients draw on it (``showTestWindow(clock:)``); screenpub asks the real portal for it.
///
/// What it takes, found the hard way:
/// - sway refuses to run as root (it could not drop the privilege for good), so under root it runs as `nobody`
///   (65534) with `setpriv`, in a directory of that user's inside the session's runtime directory; clients reach
///   its socket by its absolute path in `WAYLAND_DISPLAY`.
/// - xdg-desktop-portal-wlr 0.7 starts no cast without a DMA-BUF offer, which a compositor without a GPU never
///   makes: `Tests/Fixtures/xdpw-dmabuf-offer.c`, compiled here and loaded into xdpw alone, adds it.
/// - xdpw keeps no grant unless `XDPW_PERSIST_MODE=permanent`; its chooser command stands in for the dialog and
///   counts how often it was shown (``dialogsShown``).
/// - The portal looks for its backends once, when it starts: xdpw is on the bus before anything asks the portal.
public final class HeadlessSway: Sendable {
    public let pipewire: PrivatePipeWire
    public let width: Int
    public let height: Int
    /// sway's `WAYLAND_DISPLAY`: its socket's absolute path.
    public let socket: String
    private let directory: String
    private let compositor: ChildProcess
    private let portalBackend: ChildProcess
    private let clients = Locked<[ChildProcess]>([])

    public typealias Failure = HeadlessDesktopFailure

    static let sway = "/usr/bin/sway"
    static let portalBackendProgram = "/usr/libexec/xdg-desktop-portal-wlr"
    /// The unprivileged user sway runs as under root.
    static let unprivileged = 65534

    /// The environment of a Wayland client of this compositor (and of this session's bus and PipeWire), as a
    /// sway session gives its programs.
    public var environment: [String: String] {
        var environment = pipewire.environment
        environment["WAYLAND_DISPLAY"] = socket
        environment["XDG_CURRENT_DESKTOP"] = "sway"
        environment["GDK_BACKEND"] = "wayland"
        environment["DISPLAY"] = nil
        return environment
    }

    public init(width: Int = 640, height: Int = 480) async throws {
        for program in [Self.sway, Self.portalBackendProgram, "/usr/bin/swaymsg"] where access(program, X_OK) != 0 {
            throw Failure(description: "\(program) is not installed (apt-get install sway xdg-desktop-portal-wlr)", cannotStart: true)
        }
        self.width = width
        self.height = height
        let shim = try await CompiledFixture.build("xdpw-dmabuf-offer.so", sources: ["xdpw-dmabuf-offer.c"], libraries: ["dl"], shared: true)
        pipewire = try await PrivatePipeWire(busActivation: true)
        let runtime = pipewire.runtimeDirectory
        directory = runtime + "/sway"
        let asRoot = getuid() == 0
        // The unprivileged compositor passes through the session's directory into a directory of its own.
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if asRoot {
            chmod(runtime, 0o711)
            chown(directory, uid_t(Self.unprivileged), gid_t(Self.unprivileged))
        }
        let configuration = "output HEADLESS-1 mode \(width)x\(height)\ndefault_border none\n"
        try configuration.write(toFile: directory + "/config", atomically: true, encoding: .utf8)
        chmod(directory + "/config", 0o644)
        let swayEnvironment = [
            "XDG_RUNTIME_DIR": directory, "HOME": directory, "PATH": "/usr/bin:/bin",
            "WLR_BACKENDS": "headless", "WLR_RENDERER": "pixman", "WLR_LIBINPUT_NO_DEVICES": "1",
        ]
        let command = [Self.sway, "-c", directory + "/config"]
        compositor = try asRoot
            ? ChildProcess(
                "/usr/bin/setpriv",
                ["--reuid=\(Self.unprivileged)", "--regid=\(Self.unprivileged)", "--clear-groups"] + command, environment: swayEnvironment)
            : ChildProcess(command[0], Array(command.dropFirst()), environment: swayEnvironment)
        let directory = directory
        let compositor = compositor
        let found = try await eventually(20) {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            return names.contains { $0.hasPrefix("wayland-") && !$0.hasSuffix(".lock") } || compositor.hasExited
        }
        let name = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .first { $0.hasPrefix("wayland-") && !$0.hasSuffix(".lock") }
        guard found, let name, !compositor.hasExited else {
            compositor.signal(SIGKILL)
            throw Failure(description: "sway did not start: \(compositor.errorsSoFar.suffix(800))", cannotStart: true)
        }
        socket = directory + "/" + name

        // The portal's backend, with the grant kept and the chooser counting, on the bus before the portal.
        let chooser = "[screencast]\nchooser_type=simple\nchooser_cmd=echo shown >> \(directory)/dialogs; echo HEADLESS-1\n"
        try chooser.write(toFile: directory + "/xdpw.conf", atomically: true, encoding: .utf8)
        var backendEnvironment = pipewire.environment
        backendEnvironment["WAYLAND_DISPLAY"] = socket
        backendEnvironment["XDG_CURRENT_DESKTOP"] = "sway"
        backendEnvironment["XDPW_PERSIST_MODE"] = "permanent"
        backendEnvironment["LD_PRELOAD"] = shim
        do {
            portalBackend = try await pipewire.startPortalBackend(
                Self.portalBackendProgram, ["-c", directory + "/xdpw.conf"], environment: backendEnvironment,
                busName: "org.freedesktop.impl.portal.desktop.wlr", desktop: "sway", waylandDisplay: socket)
        } catch {
            compositor.endInBackground(signal: SIGTERM)
            throw error
        }
    }

    /// How often the portal's chooser (the dialog, on a real desktop) was shown.
    public var dialogsShown: Int {
        ((try? String(contentsOfFile: directory + "/dialogs", encoding: .utf8)) ?? "").split(separator: "\n").count
    }

    /// Runs a sway command (`swaymsg`), e.g. `output HEADLESS-1 mode 800x600`.
    public func command(_ text: String) async throws {
        let ipc = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).first { $0.hasPrefix("sway-ipc.") }
        guard let ipc else { throw Failure(description: "sway has no IPC socket in \(directory)") }
        let outcome = try await ChildProcess.run("/usr/bin/swaymsg", ["-s", directory + "/" + ipc, text])
        guard outcome.status == 0 else { throw Failure(description: "swaymsg \(text): \(outcome.standardOutput) \(outcome.standardError)") }
    }

    /// A pointer on the output, which headless sway otherwise lacks (`Tests/Fixtures/wayland-virtual-pointer.c`,
    /// through wlr-virtual-pointer); it lives as long as this desktop.
    public func pointer() async throws -> WaylandVirtualPointer {
        let program = try await CompiledFixture.build(
            "wayland-virtual-pointer", sources: ["wayland-virtual-pointer.c", "wlr-virtual-pointer-unstable-v1-protocol.c"],
            libraries: ["wayland-client"])
        let pointer = try await WaylandVirtualPointer(
            program: program, width: width, height: height, environment: environment, directory: pipewire.runtimeDirectory)
        clients.withLock { $0.append(pointer.process) }
        return pointer
    }

    public func showTestWindow(clock: Bool = false) async throws {
        let window = try await GTKTestWindow.show(environment: environment, clock: clock)
        clients.withLock { $0.append(window) }
    }

    deinit {
        for client in clients.withLock({ $0 }) { client.endInBackground(signal: SIGTERM) }
        portalBackend.endInBackground(signal: SIGTERM)
        compositor.endInBackground(signal: SIGTERM)
    }
}
