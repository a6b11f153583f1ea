import Glibc

/// How a covered area looks in the stream.
public enum CoverStyle: String, Sendable, Hashable, CaseIterable {
    /// A flat dark grey with a light striped badge in its middle, so viewers see that something is hidden.
    case solid
    /// 16×16 blocks of the area's average colours (its layout shows, no text can be read), with the same badge.
    case pixelate
}

/// What never leaves the machine: windows whose class or title matches a pattern (X11), and fixed rectangles
/// of the captured area (any backend). Sources turn it into ``VideoFrame/covers`` for every frame.
public struct PrivacyMask: Sendable, Hashable {
    /// Globs matched, ignoring case, against a window's WM_CLASS (instance and class) and title.
    public var windowPatterns: [WindowPattern]
    /// Rectangles of the captured area, in its own pixels.
    public var regions: [PixelRect]
    public var style: CoverStyle

    public init(windowPatterns: [WindowPattern] = [], regions: [PixelRect] = [], style: CoverStyle = .solid) {
        self.windowPatterns = windowPatterns
        self.regions = regions
        self.style = style
    }

    public var isEmpty: Bool { windowPatterns.isEmpty && regions.isEmpty }

    /// What `self` hides that `next` would show: its window patterns that `next` lacks, its regions that no
    /// region of `next` contains, and the solid style given up for pixelate (which shows the layout). Empty when
    /// `next` hides at least as much: a change made without asking to show something (a reload) must not show it.
    public func exposures(goingTo next: PrivacyMask) -> [String] {
        var shown = windowPatterns.filter { !next.windowPatterns.contains($0) }.map { "windows matching \"\($0)\"" }
        shown += regions.filter { region in !next.regions.contains { $0.intersection(region) == region } }.map { "region \($0)" }
        if !isEmpty && style == .solid && next.style == .pixelate { shown.append("the solid covers (pixelate shows the layout)") }
        return shown
    }
}

/// A shell-style glob (`*`, `?`, `[…]`), matched ignoring case against the whole text.
public struct WindowPattern: Sendable, Hashable, CustomStringConvertible {
    public let text: String
    private let folded: String

    /// Refuses an empty pattern, one that could never match (an unclosed `[`), and one that matches everything
    /// (which would hide the whole screen: use a region for that).
    public init(_ text: String) throws(PrivacyMaskError) {
        let trimmed = String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        guard !trimmed.isEmpty else { throw PrivacyMaskError("a window pattern is empty") }
        guard trimmed.contains(where: { $0 != "*" }) else {
            throw PrivacyMaskError("window pattern \"\(text)\" would match every window; use --mask-region to hide an area")
        }
        var depth = 0
        for character in trimmed {
            if character == "[" { depth += 1 } else if character == "]" { depth = max(0, depth - 1) }
        }
        guard depth == 0 else { throw PrivacyMaskError("window pattern \"\(text)\" has a \"[\" that is not closed") }
        self.text = trimmed
        folded = trimmed.lowercased()
    }

    public func matches(_ candidate: String) -> Bool {
        fnmatch(folded, candidate.lowercased(), 0) == 0
    }

    public var description: String { text }
}

public struct PrivacyMaskError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension PixelRect {
    /// `X,Y,W,H` (whole numbers, width and height at least 1), as `--mask-region` takes it.
    public init(maskRegion text: String) throws(PrivacyMaskError) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { Int($0.filter { !$0.isWhitespace }) }
        guard parts.count == 4, let x = parts[0], let y = parts[1], let width = parts[2], let height = parts[3],
            x >= 0, y >= 0, width >= 1, height >= 1
        else {
            throw PrivacyMaskError("a mask region is X,Y,W,H in pixels of the captured area (e.g. 0,0,400,300), not \"\(text)\"")
        }
        self.init(x: x, y: y, width: width, height: height)
    }
}

/// The covered areas of one frame and how they look; the encoders paint them over the picture they read,
/// which is the only copy of the pixels that leaves the process.
public struct FrameCovers: Sendable, Equatable {
    /// Areas of the frame, inside its bounds. Capacity is kept between frames.
    public var rects: [PixelRect] = []
    public var style: CoverStyle = .solid
    /// How many of ``rects`` are windows (`--mask-window` matches) rather than regions.
    public var windowCount = 0

    public init() { rects.reserveCapacity(16) }

    public var isEmpty: Bool { rects.isEmpty }

    /// Sets the covers to the parts of `areas` inside `bounds`, `windows` of them windows. Returns whether they
    /// changed; unchanged covers are left as they are (the encoder keeps a copy of the previous ones, and
    /// writing equal ones would copy them anew).
    public mutating func set(_ areas: [PixelRect], windows: Int = 0, within bounds: PixelRect) -> Bool {
        let clipped = areas.map { $0.intersection(bounds) }.filter { !$0.isEmpty }
        guard clipped != rects || windows != windowCount else { return false }
        rects = clipped
        windowCount = windows
        return true
    }
}
