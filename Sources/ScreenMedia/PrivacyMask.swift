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

