public import ScreenMedia

/// Why a share could not start or had to stop, in words a user can act on; the kind decides the exit status.
public typealias ShareError = ScreenError<ShareFailure>

public enum ShareFailure: Sendable, Hashable {
    /// A setting is invalid: the message names the option and what it takes.
    case invalidSettings
    /// Nothing was shared: no display, a bad target, an unwritable output, a relay that cannot be reached.
    case cannotStart
    /// The share started and then failed (display lost, disk full, token refused).
    case failed
    /// The user declined the ScreenCast portal's dialog.
    case declined
}
