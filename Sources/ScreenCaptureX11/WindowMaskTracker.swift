import CX11Shims
import CX11
import Glibc
import ScreenMedia

/// Finds the mapped top-level windows whose class or title matches a ``PrivacyMask``'s patterns, on the capture's
/// own connection, and where they are.
///
/// It follows the root's substructure (windows created, mapped, unmapped, moved, resized, restacked, reparented
/// into a window manager's frame, destroyed) and the name properties of the windows it has looked at, and walks
/// the top-level windows again after any of those. Under a window manager the top-level window is the frame;
/// the application's window inside it is the one with `WM_STATE`, and both are matched. A match covers the
/// whole top-level window, decorations included.
final class WindowMaskTracker {
    private let connection: X11Connection
    private var patterns: [WindowPattern]
    /// Something happened that may change which windows are covered, or where.
    private var stale = true
    /// Whether each window's names matched, until its names change or it is destroyed.
    private var matchedByName: [Window: Bool] = [:]
    /// Windows whose property changes this connection receives.
    private var watched: Set<Window> = []
    private let wmState: Atom, netWMName: Atom, utf8String: Atom, wmName: Atom, wmClass: Atom
    /// Covered top-level windows in root coordinates, bottom to top.
    private(set) var covered: [PixelRect] = []

    init(connection: X11Connection, patterns: [WindowPattern]) {
        self.connection = connection
        self.patterns = patterns
        wmState = XInternAtom(connection.display, "WM_STATE", 0)
        netWMName = XInternAtom(connection.display, "_NET_WM_NAME", 0)
        utf8String = XInternAtom(connection.display, "UTF8_STRING", 0)
        wmName = XInternAtom(connection.display, "WM_NAME", 0)
        wmClass = XInternAtom(connection.display, "WM_CLASS", 0)
    }

    /// The event mask the root window needs for this tracker.
    static let rootEvents = SubstructureNotifyMask

    var isActive: Bool { !patterns.isEmpty }

    func replacePatterns(_ newPatterns: [WindowPattern]) {
        patterns = newPatterns
        matchedByName.removeAll()
        stale = true
    }

    /// Looks at one event of the connection.
    func note(_ event: XEvent) {
        guard isActive else { return }
        switch event.type {
        case CreateNotify, MapNotify, UnmapNotify, ConfigureNotify, ReparentNotify, GravityNotify, CirculateNotify:
            stale = true
        case DestroyNotify:
            matchedByName[event.xdestroywindow.window] = nil
            watched.remove(event.xdestroywindow.window)
            stale = true
        case PropertyNotify:
            let atom = event.xproperty.atom
            if atom == netWMName || atom == wmName || atom == wmClass {
                matchedByName[event.xproperty.window] = nil
                stale = true
            }
        default:
            break
        }
    }

    /// Walks the windows again if something changed since the last walk. Returns whether ``covered`` changed.
    func refresh() -> Bool {
        guard isActive, stale else { return false }
        stale = false
        let display = connection.display
        var rootReturn: Window = 0, parent: Window = 0
        var children: UnsafeMutablePointer<Window>?
        var count: UInt32 = 0
        guard XQueryTree(display, connection.root, &rootReturn, &parent, &children, &count) != 0 else { return false }
        defer { if let children { XFree(children) } }
        var found: [PixelRect] = []
        for index in 0..<Int(count) {
            guard let topLevel = children?[index] else { continue }
            var attributes = XWindowAttributes()
            guard XGetWindowAttributes(display, topLevel, &attributes) != 0, attributes.map_state == IsViewable else { continue }
            let client = clientWindow(of: topLevel) ?? topLevel
            guard matches(client) || (client != topLevel && matches(topLevel)) else { continue }
            let border = Int(attributes.border_width)
            found.append(
                PixelRect(
                    x: Int(attributes.x), y: Int(attributes.y), width: Int(attributes.width) + 2 * border,
                    height: Int(attributes.height) + 2 * border))
        }
        // Errors from windows that vanished during the walk are expected; the next event walks again.
        _ = CX11Shims_takeXError()
        guard found != covered else { return false }
        covered = found
        return true
    }

    /// The application window inside a top-level window (the one with `WM_STATE`), searched a few levels deep
    /// as window managers nest it; nil when there is none (an override-redirect window, or no window manager).
    private func clientWindow(of window: Window, depth: Int = 0) -> Window? {
        if hasProperty(window, wmState) { return window }
        guard depth < 3 else { return nil }
        var rootReturn: Window = 0, parent: Window = 0
        var children: UnsafeMutablePointer<Window>?
        var count: UInt32 = 0
        guard XQueryTree(connection.display, window, &rootReturn, &parent, &children, &count) != 0 else { return nil }
        defer { if let children { XFree(children) } }
        for index in 0..<Int(count) {
            if let child = children?[index], let client = clientWindow(of: child, depth: depth + 1) { return client }
        }
        return nil
    }

    private func matches(_ window: Window) -> Bool {
        if let known = matchedByName[window] { return known }
        if !watched.contains(window) {
            // Before reading the names, so that a change after this read is reported.
            XSelectInput(connection.display, window, PropertyChangeMask | StructureNotifyMask)
            watched.insert(window)
        }
        let names = self.names(of: window)
        let matched = names.contains { name in patterns.contains { $0.matches(name) } }
        matchedByName[window] = matched
        return matched
    }

    /// WM_CLASS instance and class, `_NET_WM_NAME` and `WM_NAME`.
    private func names(of window: Window) -> [String] {
        let display = connection.display
        var names: [String] = []
        var hint = XClassHint()
        if XGetClassHint(display, window, &hint) != 0 {
            if let name = hint.res_name { names.append(String(cString: name)); XFree(name) }
            if let name = hint.res_class { names.append(String(cString: name)); XFree(name) }
        }
        if let title = stringProperty(window, netWMName, type: utf8String) { names.append(title) }
        var name: UnsafeMutablePointer<CChar>?
        if XFetchName(display, window, &name) != 0, let name {
            names.append(String(cString: name))
            XFree(name)
        }
        return names
    }

    private func stringProperty(_ window: Window, _ property: Atom, type: Atom) -> String? {
        var actualType: Atom = 0
        var format: Int32 = 0
        var items: UInt = 0, remaining: UInt = 0
        var data: UnsafeMutablePointer<UInt8>?
        guard XGetWindowProperty(
                connection.display, window, property, 0, 1024, 0, type, &actualType, &format, &items, &remaining, &data) == Success,
            let data
        else { return nil }
        defer { XFree(data) }
        guard format == 8, items > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(items)), as: UTF8.self)
    }

    private func hasProperty(_ window: Window, _ property: Atom) -> Bool {
        var actualType: Atom = 0
        var format: Int32 = 0
        var items: UInt = 0, remaining: UInt = 0
        var data: UnsafeMutablePointer<UInt8>?
        let status = XGetWindowProperty(
            connection.display, window, property, 0, 0, 0, Atom(AnyPropertyType), &actualType, &format, &items, &remaining, &data)
        if let data { XFree(data) }
        return status == Success && actualType != 0
    }
}

@available(*, unavailable, message: "uses the capture's Xlib Display, which belongs to one thread")
extension WindowMaskTracker: Sendable {}
