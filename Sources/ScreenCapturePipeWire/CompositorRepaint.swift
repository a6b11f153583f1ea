import CWaylandShims
import Foundation

/// Asks the Wayland compositor to repaint, changing no visible pixel: a fully transparent 1×1 overlay
/// (wlr-layer-shell) shown for about a frame. Compositors built on wlroots (sway, Hyprland, river, labwc) copy a
/// screen cast's frame only when the screen has changed since the portal's last copy, so a cast of a static
/// screen starts with no picture at all; a repaint gives it one. Compositors without layer-shell (GNOME's mutter)
/// send a first frame by themselves.
public enum CompositorRepaint {
    public enum Outcome: Sendable, Equatable {
        case repainted
        /// Nothing to ask: no compositor, or one without wlr-layer-shell; the reason says which.
        case unavailable(String)
        case failed(String)
    }

    /// Blocks for at most `timeout` seconds. `displayName` nil: `$WAYLAND_DISPLAY`.
    public static func request(displayName: String? = nil, timeout: Double = 0.5) -> Outcome {
        var message: UnsafeMutablePointer<CChar>?
        let milliseconds = Int32(max(1, min(10_000, timeout * 1000)))
        let outcome = CWaylandShims_requestRepaint(displayName, milliseconds, &message)
        let reason = message.map { String(cString: $0) } ?? "no reason given"
        free(message)
        switch outcome {
        case CWaylandShims_Repainted: return .repainted
        case CWaylandShims_NoCompositor, CWaylandShims_NoLayerShell: return .unavailable(reason)
        default: return .failed(reason)
        }
    }
}
