/// The commands' exit statuses (screenpub, screenrelay, screensub), documented in their `--help` and the README.
public enum ExitStatus {
    /// Capture, encoding or writing failed after starting (display lost, window closed, disk full); the relay
    /// failed or could not be reached; a stream could not be read.
    public static let runtimeFailure: Int32 = 1
    /// Could not start: no display, unknown window or monitor, region outside the screen, unwritable output; no
    /// relay secret, port in use, unusable certificate.
    public static let cannotStart: Int32 = 2
    /// `screenpub status|pause|resume|stop`: no screenpub is running (as `systemctl status` says 3).
    public static let notRunning: Int32 = 3
    /// The command line names something that is not there in a usable way (a window pattern matching several
    /// windows); sysexits' EX_USAGE, as for options ArgumentParser refuses.
    public static let usage: Int32 = 64
    /// The user declined screen sharing in the ScreenCast portal's dialog (sysexits' EX_NOPERM); the
    /// service is not restarted for it.
    public static let declined: Int32 = 77
    /// A configuration file or `SCREENPUB_*`/`SCREENRELAY_*` variable is invalid (sysexits' EX_CONFIG).
    public static let badConfiguration: Int32 = 78
}
