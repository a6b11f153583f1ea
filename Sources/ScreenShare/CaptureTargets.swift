import Foundation
import ScreenCaptureX11
import ScreenService

/// `screenpub --list-windows` and `--list-monitors`: what `--window` and `--monitor` can name, as a table or JSON.
public enum CaptureTargets {
    /// The windows of `settings.display` (else `$DISPLAY`), top of the stack first.
    public static func windows(_ settings: ShareSettings, environment: [String: String], json: Bool) throws(ShareError) -> String {
        try refuseWayland(settings, environment: environment, what: "windows")
        let windows: [X11WindowInfo]
        do { windows = try X11Inventory.windows(displayName: settings.display) } catch { throw ShareError(.cannotStart, error.message) }
        if json { return encode(windows) }
        guard !windows.isEmpty else { return "no named window is mapped on \(settings.display ?? environment["DISPLAY"] ?? "the display")" }
        return TextTable.render(
            header: ["ID", "CLASS", "GEOMETRY", "TITLE"],
            rows: windows.map { window in
                [
                    window.hexID, window.className.isEmpty ? window.instance : window.className,
                    "\(window.width)x\(window.height)+\(window.x)+\(window.y)", window.title,
                ]
            })
    }

    /// The RandR monitors of `settings.display` (else `$DISPLAY`), as `xrandr --listmonitors` numbers them.
    public static func monitors(_ settings: ShareSettings, environment: [String: String], json: Bool) throws(ShareError) -> String {
        try refuseWayland(settings, environment: environment, what: "monitors")
        let monitors: [X11MonitorInfo]
        do { monitors = try X11Inventory.monitors(displayName: settings.display) } catch { throw ShareError(.cannotStart, error.message) }
        if json { return encode(monitors) }
        return TextTable.render(
            header: ["INDEX", "NAME", "GEOMETRY", "PRIMARY"],
            rows: monitors.map { monitor in
                ["\(monitor.index)", monitor.name, "\(monitor.width)x\(monitor.height)+\(monitor.x)+\(monitor.y)", monitor.primary ? "yes" : ""]
            })
    }

    /// On Wayland the compositor shows no client its windows or outputs: the portal's dialog is where they are picked.
    private static func refuseWayland(_ settings: ShareSettings, environment: [String: String], what: String) throws(ShareError) {
        guard ShareConfiguration.resolvedBackend(settings, environment: environment) == .pipewire else { return }
        throw ShareError(
            .cannotStart,
            "on Wayland screenpub cannot list \(what): the compositor shows them only in the ScreenCast portal's dialog, which asks when sharing starts (--portal-source monitor, window or any). To list an X server's \(what), give --backend x11 and --display")
    }

    private static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(value)) ?? Data("[]".utf8), as: UTF8.self)
    }
}
