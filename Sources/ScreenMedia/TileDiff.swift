#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Finds what changed between two BGRA pictures of the same size, in tiles of 32×32 pixels (libwebrtc's screen
/// differ works the same way): the damage of a compositor that sends none. Each row is compared whole first
/// (one `memcmp` of the row: an unchanged row, most of them, costs nothing more); only a row that differs is
/// compared tile by tile, for the tiles of its band not yet known to have changed. Changed tiles next to each
/// other in a band of 32 rows become one rectangle. Allocates nothing when `rects` has the capacity.
public enum TileDiff {
    public static let tileSide = 32

    /// Appends the changed tiles of `current` against `previous` (both `width`×`height`, 4 bytes a pixel) to
    /// `rects`; returns how many rectangles it appended.
    @discardableResult
    public static func changedRects(
        previous: UnsafeRawPointer, previousStride: Int, current: UnsafeRawPointer, currentStride: Int,
        width: Int, height: Int, into rects: inout [PixelRect]
    ) -> Int {
        let columns = (width + tileSide - 1) / tileSide
        let rowBytes = width * 4
        var appended = 0
        withUnsafeTemporaryAllocation(of: Bool.self, capacity: columns) { changed in
            var bandTop = 0
            while bandTop < height {
                let bandHeight = min(tileSide, height - bandTop)
                changed.initialize(repeating: false)
                var changedCount = 0
                for row in bandTop..<(bandTop + bandHeight) where changedCount < columns {
                    let before = previous + row * previousStride, after = current + row * currentStride
                    guard memcmp(before, after, rowBytes) != 0 else { continue }
                    for column in 0..<columns where !changed[column] {
                        let offset = column * tileSide * 4
                        let bytes = min(tileSide, width - column * tileSide) * 4
                        if memcmp(before + offset, after + offset, bytes) != 0 {
                            changed[column] = true
                            changedCount += 1
                        }
                    }
                }
                var column = 0
                while column < columns {
                    guard changed[column] else {
                        column += 1
                        continue
                    }
                    let first = column
                    while column < columns && changed[column] { column += 1 }
                    let x = first * tileSide
                    rects.append(PixelRect(x: x, y: bandTop, width: min(column * tileSide, width) - x, height: bandHeight))
                    appended += 1
                }
                bandTop += tileSide
            }
        }
        return appended
    }
}
