import CX11Shims
import CX11
import Glibc

/// The one owner of an Xlib `Display*`. Closed on deinit. Not thread-safe: used by one thread at a time.
final class X11Connection {
    let display: OpaquePointer
    let name: String
    let screen: Int32
    let root: Window

    init(name requestedName: String?) throws(X11CaptureError) {
        CX11Shims_installXErrorHandlers()
        let environmentName = getenv("DISPLAY").map { String(cString: $0) }
        guard let name = requestedName ?? environmentName, !name.isEmpty else {
            throw X11CaptureError(
                .noDisplay,
                "no X display: $DISPLAY is not set and --display was not given (X11 capture needs an X server or XWayland; "
                    + "headless, start one with `Xvfb :99 &` and pass --display :99)")
        }
        guard let display = XOpenDisplay(name) else {
            throw X11CaptureError(
                .cannotOpenDisplay,
                "cannot open X display \(name): no server is listening there or access is denied (check xauth)")
        }
        CX11Shims_watchDisplay(display)
        self.display = display
        self.name = name
        self.screen = XDefaultScreen(display)
        self.root = XRootWindow(display, screen)
    }

    deinit {
        if !CX11Shims_xConnectionLost(display) { XCloseDisplay(display) }
        CX11Shims_forgetDisplay(display)
    }

    var isLost: Bool { CX11Shims_xConnectionLost(display) }

    func checkAlive() throws(X11CaptureError) {
        if isLost {
            throw X11CaptureError(.connectionLost, "the X server \(name) went away (connection lost)")
        }
    }

    /// Runs `body`, waits for the server's answer and returns the X error code it caused (0 = none).
    func errorCode(_ body: () -> Void) -> Int32 {
        _ = CX11Shims_takeXError()
        body()
        XSync(display, 0)
        return CX11Shims_takeXError()
    }

    func hasExtension(_ name: String) -> Bool {
        var opcode: Int32 = 0, event: Int32 = 0, error: Int32 = 0
        return XQueryExtension(display, name, &opcode, &event, &error) != 0
    }
}

@available(*, unavailable, message: "an Xlib Display belongs to one thread at a time")
extension X11Connection: Sendable {}
