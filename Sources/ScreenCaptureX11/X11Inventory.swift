import CX11Shims
import CX11
import Glibc
public import ScreenMedia

/// A window a person can pick to share: the application's window (under a window manager, the one inside
/// its frame), its names and where it is on the screen.
public struct X11WindowInfo: Sendable, Hashable, Codable {
    /// The id `--window` takes (as `xwininfo` prints it).
    public var id: UInt
    /// `WM_CLASS`: the instance and class names ("" when unset).
    public var instance: String
    public var className: String
    /// `_NET_WM_NAME`, else `WM_NAME` ("" when unset).
    public var title: String
    /// In root-window coordinates.
    public var x: Int, y: Int, width: Int, height: Int

    /// `0x…`, as `xwininfo` and `wmctrl` print window ids.
    public var hexID: String { "0x" + String(id, radix: 16) }

    /// Whether `pattern` matches its class, instance or title.
    public func matches(_ pattern: WindowPattern) -> Bool {
        [instance, className, title].contains { !$0.isEmpty && pattern.matches($0) }
    }
}

/// A RandR monitor as `--monitor` takes it: by its index in `xrandr --listmonitors` or by its name.
public struct X11MonitorInfo: Sendable, Hashable, Codable {
    public var index: Int
    /// The output's name (`HDMI-1`, `eDP-1`), or the name given with `xrandr --setmonitor`.
    public var name: String
    public var x: Int, y: Int, width: Int, height: Int
    public var primary: Bool
}

/// What there is to share on an X display: its top-level windows and its monitors.
public enum X11Inventory {
    /// The mapped, named windows, top of the stack first.
    public static func windows(displayName: String?) throws(X11CaptureError) -> [X11WindowInfo] {
        try windows(on: X11Connection(name: displayName))
    }

    public static func monitors(displayName: String?) throws(X11CaptureError) -> [X11MonitorInfo] {
        try monitors(on: X11Connection(name: displayName))
    }

    static func windows(on connection: X11Connection) throws(X11CaptureError) -> [X11WindowInfo] {
        let display = connection.display
        var found: [X11WindowInfo] = []
        for topLevel in (connection.children(of: connection.root) ?? []).reversed() {
            var attributes = XWindowAttributes()
            guard XGetWindowAttributes(display, topLevel, &attributes) != 0, attributes.map_state == IsViewable,
                attributes.`class` == InputOutput
            else { continue }
            let client = connection.clientWindow(of: topLevel) ?? topLevel
            let names = connection.names(of: client)
            // Unnamed windows are a desktop's furniture (panels' helpers, tooltips), nothing to pick by name.
            guard !(names.instance.isEmpty && names.className.isEmpty && names.titles.isEmpty) else { continue }
            var clientAttributes = XWindowAttributes()
            guard XGetWindowAttributes(display, client, &clientAttributes) != 0 else { continue }
            var x: Int32 = 0, y: Int32 = 0
            var child: Window = 0
            XTranslateCoordinates(display, client, connection.root, 0, 0, &x, &y, &child)
            found.append(
                X11WindowInfo(
                    id: UInt(client), instance: names.instance, className: names.className, title: names.titles.first ?? "", x: Int(x), y: Int(y),
                    width: Int(clientAttributes.width), height: Int(clientAttributes.height)))
        }
        // Windows that vanished during the walk are simply not listed.
        _ = CX11Shims_takeXError()
        try connection.checkAlive()
        return found
    }

    static func monitors(on connection: X11Connection) throws(X11CaptureError) -> [X11MonitorInfo] {
        guard connection.hasExtension("RANDR") else {
            throw X11CaptureError(.missingExtension, "the X server \(connection.name) has no RandR extension: it names no monitors")
        }
        var count: Int32 = 0
        guard let monitors = XRRGetMonitors(connection.display, connection.root, 1, &count) else { return [] }
        defer { XRRFreeMonitors(monitors) }
        return (0..<Int(count)).map { index in
            let monitor = monitors[index]
            var name = ""
            if let atomName = XGetAtomName(connection.display, monitor.name) {
                name = String(cString: atomName)
                XFree(atomName)
            }
            return X11MonitorInfo(
                index: index, name: name, x: Int(monitor.x), y: Int(monitor.y), width: Int(monitor.width), height: Int(monitor.height),
                primary: monitor.primary != 0)
        }
    }

    /// The one window `pattern` matches; throws naming every match when there are several, or saying that there
    /// is none.
    static func window(matching pattern: WindowPattern, on connection: X11Connection) throws(X11CaptureError) -> X11WindowInfo {
        let matching = try windows(on: connection).filter { $0.matches(pattern) }
        guard matching.count == 1 else {
            if matching.isEmpty {
                throw X11CaptureError(
                    .unknownWindow,
                    "no window on \(connection.name) has a class or title matching \"\(pattern)\" (`screenpub --list-windows` shows them)")
            }
            let list = matching.map { "  \($0.hexID)  \($0.className.isEmpty ? $0.instance : $0.className)  \"\($0.title)\"" }
            throw X11CaptureError(
                .ambiguousWindow,
                "\(matching.count) windows match \"\(pattern)\"; give a narrower pattern or one of their ids with --window:\n"
                    + list.joined(separator: "\n"))
        }
        return matching[0]
    }

    /// The monitor named `name` (exactly, ignoring case).
    static func monitor(named name: String, on connection: X11Connection) throws(X11CaptureError) -> X11MonitorInfo {
        let all = try monitors(on: connection)
        guard let monitor = all.first(where: { $0.name.lowercased() == name.lowercased() }) else {
            let names = all.map(\.name).joined(separator: ", ")
            throw X11CaptureError(
                .unknownMonitor,
                "there is no monitor \"\(name)\" on \(connection.name)\(all.isEmpty ? "" : ": it has \(names) (or give an index from 0)")")
        }
        return monitor
    }
}

// MARK: Window properties (shared with WindowMaskTracker)

extension X11Connection {
    /// The children of `window`, bottom of the stack first; nil when it is gone.
    func children(of window: Window) -> [Window]? {
        var rootReturn: Window = 0, parent: Window = 0
        var children: UnsafeMutablePointer<Window>?
        var count: UInt32 = 0
        guard XQueryTree(display, window, &rootReturn, &parent, &children, &count) != 0 else { return nil }
        guard let children else { return [] }
        defer { XFree(children) }
        return Array(UnsafeBufferPointer(start: children, count: Int(count)))
    }

    /// The application window inside a top-level window (the one with `WM_STATE`), searched a few levels deep
    /// as window managers nest it; nil when there is none (an override-redirect window, or no window manager).
    func clientWindow(of window: Window, depth: Int = 0) -> Window? {
        if hasProperty(window, atom("WM_STATE")) { return window }
        guard depth < 3 else { return nil }
        for child in children(of: window) ?? [] {
            if let client = clientWindow(of: child, depth: depth + 1) { return client }
        }
        return nil
    }

    /// `WM_CLASS` instance and class ("" when unset), and the titles it has: `_NET_WM_NAME` first, then
    /// `WM_NAME` when that differs (a mask matches either; a list shows the first).
    func names(of window: Window) -> (instance: String, className: String, titles: [String]) {
        var instance = "", className = ""
        var hint = XClassHint()
        if XGetClassHint(display, window, &hint) != 0 {
            if let name = hint.res_name { instance = String(cString: name); XFree(name) }
            if let name = hint.res_class { className = String(cString: name); XFree(name) }
        }
        var titles: [String] = []
        if let title = stringProperty(window, atom("_NET_WM_NAME"), type: atom("UTF8_STRING")), !title.isEmpty { titles.append(title) }
        var name: UnsafeMutablePointer<CChar>?
        if XFetchName(display, window, &name) != 0, let name {
            let title = String(cString: name)
            XFree(name)
            if !title.isEmpty, !titles.contains(title) { titles.append(title) }
        }
        return (instance, className, titles)
    }

    func atom(_ name: String) -> Atom { XInternAtom(display, name, 0) }

    func stringProperty(_ window: Window, _ property: Atom, type: Atom) -> String? {
        var actualType: Atom = 0
        var format: Int32 = 0
        var items: UInt = 0, remaining: UInt = 0
        var data: UnsafeMutablePointer<UInt8>?
        guard XGetWindowProperty(display, window, property, 0, 1024, 0, type, &actualType, &format, &items, &remaining, &data) == Success,
            let data
        else { return nil }
        defer { XFree(data) }
        guard format == 8, items > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(items)), as: UTF8.self)
    }

    func hasProperty(_ window: Window, _ property: Atom) -> Bool {
        var actualType: Atom = 0
        var format: Int32 = 0
        var items: UInt = 0, remaining: UInt = 0
        var data: UnsafeMutablePointer<UInt8>?
        let status = XGetWindowProperty(
            display, window, property, 0, 0, 0, Atom(AnyPropertyType), &actualType, &format, &items, &remaining, &data)
        if let data { XFree(data) }
        return status == Success && actualType != 0
    }
}
