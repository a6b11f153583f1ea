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
    private let netWMName: Atom, wmName: Atom, wmClass: Atom
    /// Covered top-level windows in root coordinates, bottom to top.
    private(set) var covered: [PixelRect] = []

    init(connection: X11Connection, patterns: [WindowPattern]) {
        self.connection = connection
        self.patterns = patterns
        netWMName = connection.atom("_NET_WM_NAME")
        wmName = connection.atom("WM_NAME")
        wmClass = connection.atom("WM_CLASS")
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
        // When the tree cannot be read, the covers stay where they are.
        guard let topLevels = connection.children(of: connection.root) else { return false }
        var found: [PixelRect] = []
        for topLevel in topLevels {
            var attributes = XWindowAttributes()
            guard XGetWindowAttributes(display, topLevel, &attributes) != 0, attributes.map_state == IsViewable else { continue }
            let client = connection.clientWindow(of: topLevel) ?? topLevel
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

    private func matches(_ window: Window) -> Bool {
        if let known = matchedByName[window] { return known }
        if !watched.contains(window) {
            // Before reading the names, so that a change after this read is reported.
            XSelectInput(connection.display, window, PropertyChangeMask | StructureNotifyMask)
            watched.insert(window)
        }
        let names = connection.names(of: window)
        let matched = ([names.instance, names.className] + names.titles).contains { name in
            !name.isEmpty && patterns.contains { $0.matches(name) }
        }
        matchedByName[window] = matched
        return matched
    }
}

@available(*, unavailable, message: "uses the capture's Xlib Display, which belongs to one thread")
extension WindowMaskTracker: Sendable {}
