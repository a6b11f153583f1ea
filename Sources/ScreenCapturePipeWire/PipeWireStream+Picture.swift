import CPipeWire
import CPipeWireShims
import CYUV
import Foundation
import Logging
import ScreenMedia

/// What a kept buffer becomes at a tick: its changed parts copied into the frame, the pointer drawn over it,
/// its damage and cursor metadata read.
extension PipeWireStream {
    /// At a tick: copies the held picture's changed parts into the frame (one copy, swizzled on the way),
    /// gives the buffer back, and redraws the pointer if it moved — then ``pictureChanged`` tells the
    /// capture loop to hand the frame on.
    func takeHeldPicture() {
        guard let frame, heldPicture != nil || (cursorChanged && hasPicture) else { return }
        // Take the pointer off the picture (it moved, or the picture under it is replaced).
        if let uncovered = cursor.restorePixelsBelow(in: frame) { frame.changedRects.append(uncovered) }
        let now = clock.nanoseconds(fromTicks: clock.now())
        var stamp = now
        if let held = heldPicture {
            defer { releaseHeldPicture() }
            // Checked when it was kept (``carriesPicture(_:)``); a buffer without them is given back unread.
            if let spaBuffer = held.pointee.buffer, let data = spaBuffer.pointee.datas, let chunk = data.pointee.chunk,
                let mapped = data.pointee.data,
                case let stride = chunk.pointee.stride > 0 ? Int(chunk.pointee.stride) : frame.width * 4,
                stride >= frame.width * 4, stride * frame.height <= Int(data.pointee.maxsize) - Int(chunk.pointee.offset)
            {
                let source = mapped.advanced(by: Int(chunk.pointee.offset))
                defer { damageRegion.removeAll() }
                if wholePictureChanged || !hasPicture || (comparesTiles && swizzles) {
                    frame.markAllChanged()
                } else if !comparesTiles {
                    frame.changedRects.append(contentsOf: damageRegion.rects)
                } else {
                    // The frame holds the last picture (the pointer already taken off): compare in tiles.
                    frame.withUnsafeBytes { previous in
                        guard let previous = previous.baseAddress else { return }
                        _ = TileDiff.changedRects(
                            previous: previous, previousStride: frame.bytesPerRow, current: source,
                            currentStride: stride, width: frame.width, height: frame.height, into: &frame.changedRects)
                    }
                    if frame.changedRects.isEmpty && !cursorChanged {
                        // The same picture again (a compositor repainting without damage): nothing to do.
                        comparesTiles = false
                        return
                    }
                }
                copy(from: source, stride: stride, into: frame)
                wholePictureChanged = false
                comparesTiles = false
                // The compositor's presentation time when it is on our clock (CLOCK_MONOTONIC), else now.
                var pts: Int64 = -1, headerFlags: UInt32 = 0
                if CPipeWireShims_header(spaBuffer, &pts, &headerFlags), pts > 0, UInt64(pts) <= now, now - UInt64(pts) < 1_000_000_000 {
                    stamp = UInt64(pts)
                }
                hasPicture = true
            }
        }
        guard hasPicture else { return }
        cursorChanged = false
        if let position = cursorPosition, cursor.hasShape {
            cursor.draw(into: frame, pointerX: Int(position.x), pointerY: Int(position.y), keepingPixelsBelow: true)
            if !cursor.drawnRect.isEmpty { frame.changedRects.append(cursor.drawnRect) }
        }
        frame.captureTime = clock.mediaTime(fromTicks: clock.ticks(fromNanoseconds: stamp))
        frame.wallClock = WallClockTime.now()
        pictureChanged = true
    }

    /// Whether the buffer holds a picture: mapped data, a non-empty chunk, not marked corrupted.
    static func carriesPicture(_ buffer: UnsafeMutablePointer<spa_buffer>) -> Bool {
        var pts: Int64 = -1, headerFlags: UInt32 = 0
        _ = CPipeWireShims_header(buffer, &pts, &headerFlags)
        guard buffer.pointee.n_datas > 0, let data = buffer.pointee.datas, data.pointee.data != nil,
            let chunk = data.pointee.chunk, chunk.pointee.size > 0
        else { return false }
        return headerFlags & UInt32(SPA_META_HEADER_FLAG_CORRUPTED) == 0 && chunk.pointee.flags & Int32(SPA_CHUNK_FLAG_CORRUPTED) == 0
    }

    /// Takes the buffer's cursor metadata; true when the pointer moved, appeared, vanished or changed shape.
    func readCursor(_ buffer: UnsafeMutablePointer<spa_buffer>) -> Bool {
        var meta = CPipeWireShims_Cursor()
        let kind = CPipeWireShims_cursor(buffer, &meta)
        if !checkedCursorMetadata {
            checkedCursorMetadata = true
            if kind == -1 && expectsCursorMetadata {
                logger.warning(
                    "PipeWire node \(nodeID) sends no cursor metadata although the pointer was to come that way: the pointer will not be shown (the compositor's cursor metadata size may be larger than a \(Self.largestCursorSide)×\(Self.largestCursorSide) pointer)")
            }
        }
        switch kind {
        case -1:
            return false
        case 0:
            defer { cursorPosition = nil }
            return cursorPosition != nil
        default:
            var changed = cursorPosition.map { $0.x != meta.x || $0.y != meta.y } ?? true
            cursorPosition = (meta.x, meta.y)
            if kind == 2, let pixels = meta.pixels { changed = loadCursorShape(meta, pixels) || changed }
            return changed
        }
    }

    /// Converts a cursor bitmap (straight alpha, RGBA or BGRA) to the overlay's premultiplied BGRA.
    func loadCursorShape(_ meta: CPipeWireShims_Cursor, _ pixels: UnsafePointer<UInt8>) -> Bool {
        let format = spa_video_format(meta.format)
        let redFirst: Bool
        switch format {
        case SPA_VIDEO_FORMAT_RGBA: redFirst = true
        case SPA_VIDEO_FORMAT_BGRA: redFirst = false
        default:
            if !reportedCursorFormat {
                reportedCursorFormat = true
                logger.warning("PipeWire node \(nodeID): cursor bitmaps in format \(meta.format) are not drawn")
            }
            return false
        }
        let width = Int(meta.width), height = Int(meta.height), stride = Int(meta.stride)
        guard width <= Int(Self.largestCursorSide), height <= Int(Self.largestCursorSide) else { return false }
        cursor.setShape(width: width, height: height, hotX: Int(meta.hotX), hotY: Int(meta.hotY)) { shape in
            for row in 0..<height {
                let line = pixels + row * stride
                for column in 0..<width {
                    let pixel = line + column * 4
                    let alpha = UInt32(pixel[3])
                    let red = UInt32(redFirst ? pixel[0] : pixel[2]), blue = UInt32(redFirst ? pixel[2] : pixel[0])
                    let green = UInt32(pixel[1])
                    // Swift's << binds tighter than * and /: each channel is premultiplied first, then placed.
                    let premultipliedRed = (red * alpha + 127) / 255, premultipliedGreen = (green * alpha + 127) / 255
                    let premultipliedBlue = (blue * alpha + 127) / 255
                    shape.append(alpha << 24 | premultipliedRed << 16 | premultipliedGreen << 8 | premultipliedBlue)
                }
            }
        }
        return true
    }

    /// Adds a buffer's damage rectangles to ``damageRegion``; false when the buffer has no damage metadata or
    /// they are too many (then the picture is compared in tiles).
    func collectDamage(_ buffer: UnsafeMutablePointer<spa_buffer>?, into frame: VideoFrame) -> Bool {
        guard let buffer else { return false }
        let count = damage.withUnsafeMutableBufferPointer {
            CPipeWireShims_damage(buffer, $0.baseAddress, Int32(Self.damageCapacity))
        }
        guard count >= 0, count <= Int32(Self.damageCapacity) else { return false }
        for index in 0..<Int(count) {
            let rect = PixelRect(
                x: Int(damage[index * 4]), y: Int(damage[index * 4 + 1]), width: Int(damage[index * 4 + 2]),
                height: Int(damage[index * 4 + 3]))
            damageRegion.add(rect, within: frame.bounds)
        }
        // Past the region's limit, comparing tiles finds less to code than the rectangles' bounding box.
        return !damageRegion.overflowed
    }

    /// Whether the stream's pixels are in RGB order, to be swizzled into our BGRA (and so not comparable with
    /// the frame byte for byte).
    var swizzles: Bool { format == SPA_VIDEO_FORMAT_RGBx || format == SPA_VIDEO_FORMAT_RGBA }

    /// Copies the changed rectangles from the buffer into the frame, as BGRA.
    func copy(from source: UnsafeMutableRawPointer, stride: Int, into frame: VideoFrame) {
        frame.withUnsafeMutableBytes { destination in
            guard let base = destination.baseAddress else { return }
            for rect in frame.changedRects {
                let from = source.advanced(by: rect.y * stride + rect.x * 4).assumingMemoryBound(to: UInt8.self)
                let to = base.advanced(by: rect.y * frame.bytesPerRow + rect.x * 4).assumingMemoryBound(to: UInt8.self)
                if swizzles {
                    // libyuv's "ABGR" is R,G,B,A in memory; its "ARGB" is B,G,R,A: our BGRA.
                    _ = ABGRToARGB(from, Int32(stride), to, Int32(frame.bytesPerRow), Int32(rect.width), Int32(rect.height))
                } else {
                    _ = ARGBCopy(from, Int32(stride), to, Int32(frame.bytesPerRow), Int32(rect.width), Int32(rect.height))
                }
            }
        }
    }
}
