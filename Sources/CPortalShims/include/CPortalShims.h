#ifndef CPORTALSHIMS_H
#define CPORTALSHIMS_H

// The ScreenCast portal as one blocking call, for Swift: libportal is asynchronous on a GLib main context,
// which this runs privately on the calling thread until the portal (and the user) have answered.

#include <stdbool.h>
#include <stdint.h>

typedef struct CPortalShims_Session CPortalShims_Session;

enum CPortalShims_Failure {
    CPortalShims_NoSessionBus = 1,  // no D-Bus session bus to talk to
    CPortalShims_NoPortal = 2,      // nothing provides org.freedesktop.portal.Desktop
    CPortalShims_NoScreenCast = 3,  // the portal has no ScreenCast interface (no backend implements it)
    CPortalShims_Cancelled = 4,     // the user said no
    CPortalShims_Failed = 5,        // the portal or its backend failed
    CPortalShims_TimedOut = 6,      // no answer within the timeout
    CPortalShims_Stopped = 7,       // shouldStop said so while waiting
    CPortalShims_SourceUnavailable = 8,  // the backend cannot share the kind of source asked for
};

typedef struct {
    uint32_t sourceTypes;      // XdpOutputType bits: 1 monitor, 2 window
    uint32_t cursorMode;       // XdpCursorMode: 1 hidden, 2 embedded, 4 metadata
    const char *restoreToken;  // from an earlier grant, or NULL
    double timeoutSeconds;     // for the whole exchange, the user's dialog included
    // Polled every 100 ms while waiting: true ends the wait (failure Cancelled). May be NULL.
    bool (*shouldStop)(void *context);
    void *shouldStopContext;
} CPortalShims_Request;

/// Creates a screen-cast session (persist mode 2: until revoked), selects sources and starts it.
/// Returns NULL on failure, with `failure` set and `message` a malloc'd description (free it).
CPortalShims_Session *CPortalShims_start(const CPortalShims_Request *request, int *failure, char **message);

/// The ScreenCast interface version the portal offers, or 0 (set after a start).
uint32_t CPortalShims_version(const CPortalShims_Session *session);
/// The cursor mode asked for: the requested one, or metadata/hidden when the backend cannot embed.
uint32_t CPortalShims_cursorMode(const CPortalShims_Session *session);
uint32_t CPortalShims_streamCount(const CPortalShims_Session *session);
/// The PipeWire node of stream `index` (UINT32_MAX when there is no such stream).
uint32_t CPortalShims_streamNode(const CPortalShims_Session *session, uint32_t index);
/// What stream `index` shows (XdpOutputType: 1 monitor, 2 window, 4 virtual), or 0 when the portal did not say.
uint32_t CPortalShims_streamSourceType(const CPortalShims_Session *session, uint32_t index);
/// The token to pass next time so that the user is not asked again (malloc'd; NULL when none was given).
char *CPortalShims_restoreToken(const CPortalShims_Session *session);
/// A new connection to the PipeWire daemon that serves the session's nodes: a file descriptor, or -1.
int CPortalShims_openPipeWireRemote(CPortalShims_Session *session, char **message);
/// Closes the session (the compositor stops casting) and frees it.
void CPortalShims_close(CPortalShims_Session *session);

#endif
