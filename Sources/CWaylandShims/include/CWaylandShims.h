#ifndef CWAYLANDSHIMS_H
#define CWAYLANDSHIMS_H

/// What asking the compositor to repaint came to.
typedef enum {
    /// A transparent 1×1 overlay was shown and removed: the compositor repainted.
    CWaylandShims_Repainted = 0,
    /// No Wayland compositor answers at $WAYLAND_DISPLAY (or wayland-0).
    CWaylandShims_NoCompositor = 1,
    /// The compositor offers no wlr-layer-shell (GNOME's mutter, for one), so there is nothing to show.
    CWaylandShims_NoLayerShell = 2,
    /// The compositor did not answer in time, or the connection failed.
    CWaylandShims_Failed = 3,
} CWaylandShims_RepaintOutcome;

/// Makes the compositor at `displayName` (NULL: $WAYLAND_DISPLAY) repaint its outputs without changing a visible
/// pixel: a fully transparent 1×1 layer-shell surface on the overlay layer, taking no input, is mapped for about
/// a frame and removed. Blocks for at most `timeoutMilliseconds`. On failure `*message` (when not NULL) is set
/// to a malloc'ed reason.
CWaylandShims_RepaintOutcome CWaylandShims_requestRepaint(const char *displayName, int timeoutMilliseconds, char **message);

#endif
