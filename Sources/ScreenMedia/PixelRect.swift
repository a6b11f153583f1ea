/// A rectangle in pixels.
public struct PixelRect: Sendable, Hashable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var isEmpty: Bool { width <= 0 || height <= 0 }
    public var maxX: Int { x + width }
    public var maxY: Int { y + height }

    public func intersection(_ other: PixelRect) -> PixelRect {
        let left = max(x, other.x), top = max(y, other.y)
        let right = min(maxX, other.maxX), bottom = min(maxY, other.maxY)
        return PixelRect(x: left, y: top, width: max(0, right - left), height: max(0, bottom - top))
    }

    public func union(_ other: PixelRect) -> PixelRect {
        if isEmpty { return other }
        if other.isEmpty { return self }
        let left = min(x, other.x), top = min(y, other.y)
        return PixelRect(x: left, y: top, width: max(maxX, other.maxX) - left, height: max(maxY, other.maxY) - top)
    }

    /// Parses `X,Y,W,H` (as given to `--region`).
    public init?(parsing text: String) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map {
            Int($0.trimmingCharacters(in: " "))
        }
        guard parts.count == 4, let x = parts[0], let y = parts[1], let width = parts[2], let height = parts[3],
            x >= 0, y >= 0, width > 0, height > 0
        else { return nil }
        self.init(x: x, y: y, width: width, height: height)
    }

    public var description: String { "\(x),\(y),\(width),\(height)" }
}

extension Substring {
    fileprivate func trimmingCharacters(in character: Character) -> Substring {
        var result = self
        while result.first == character { result = result.dropFirst() }
        while result.last == character { result = result.dropLast() }
        return result
    }
}
