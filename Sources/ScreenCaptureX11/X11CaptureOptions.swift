public import ScreenMedia

/// What part of the X screen to capture.
public enum X11CaptureTarget: Sendable, Hashable {
    /// The whole root window (all monitors).
    case rootWindow
    /// One RandR monitor, by index as `xrandr --listmonitors` numbers them.
    case monitor(Int)
    /// One RandR monitor by name (`HDMI-1`), ignoring case; followed by name when monitors change.
    case monitorNamed(String)
    /// One top-level or child window by id (the seed's "a view as the video source").
    case window(UInt)
    /// The one window whose class, instance or title the pattern matches when capture starts (see
    /// ``X11Inventory``); several matches refuse to start, naming them.
    case windowMatching(WindowPattern)
    /// A fixed rectangle of the root window.
    case region(PixelRect)
}

public struct X11CaptureOptions: Sendable, Hashable {
    /// The X display name (`:0`); nil uses `$DISPLAY`.
    public var displayName: String?
    public var target: X11CaptureTarget
    /// Draw the pointer into the frames (XFixes cursor image).
    public var drawsCursor: Bool
    /// Use MIT-SHM when the server allows it; otherwise (or when false) XGetImage, about 10× slower.
    public var usesSharedMemory: Bool
    /// Windows and regions covered in every frame.
    public var mask: PrivacyMask

    public init(
        displayName: String? = nil, target: X11CaptureTarget = .rootWindow, drawsCursor: Bool = true,
        usesSharedMemory: Bool = true, mask: PrivacyMask = PrivacyMask()
    ) {
        self.displayName = displayName
        self.target = target
        self.drawsCursor = drawsCursor
        self.usesSharedMemory = usesSharedMemory
        self.mask = mask
    }
}
