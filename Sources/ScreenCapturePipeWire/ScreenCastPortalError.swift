public import ScreenMedia

/// Why the ScreenCast portal gave no screen.
public typealias ScreenCastPortalError = ScreenError<ScreenCastPortalFailure>

public enum ScreenCastPortalFailure: Sendable, Hashable {
    /// No D-Bus session bus (`$DBUS_SESSION_BUS_ADDRESS`), so no portal to ask.
    case noSessionBus
    /// Nothing provides `org.freedesktop.portal.Desktop` (xdg-desktop-portal is not installed or not running).
    case noPortal
    /// The portal runs but no backend offers ScreenCast (e.g. no xdg-desktop-portal-gnome/-kde/-wlr).
    case noScreenCast
    /// The backend cannot share the kind of source asked for (a window, of a backend that shares only monitors),
    /// or granted another kind.
    case sourceUnavailable
    /// The user declined the screen-sharing dialog.
    case cancelled
    /// The portal or its backend failed.
    case failed
    /// No answer within the timeout (the dialog was left open).
    case timedOut
    /// The caller stopped while the portal was being asked.
    case stopped
}

extension ScreenCastPortalFailure: CaptureFailureKind {
    /// The portal may come back; a user's answer or our own stop stands.
    public var isTransient: Bool { ![.cancelled, .stopped, .sourceUnavailable].contains(self) }
}
