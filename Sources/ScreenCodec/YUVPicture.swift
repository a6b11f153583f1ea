import CYUV
import ScreenMedia

/// An 8-bit YUV picture, 4:2:0 or 4:4:4, in memory of its own, reused for every frame of one size: what the
/// encoders read. Each codec library is lent its planes through its own image descriptor (`vpx_img_wrap`,
/// `aom_img_wrap`).
final class YUVPicture {
    let width: Int
    let height: Int
    let chroma: ChromaFormat
    let lumaStride: Int
    let chromaStride: Int
    let luma: UnsafeMutablePointer<UInt8>
    let blueDifference: UnsafeMutablePointer<UInt8>
    let redDifference: UnsafeMutablePointer<UInt8>
    private let storage: UnsafeMutableRawPointer

    /// Rows are 32-byte aligned (the SIMD loads of libyuv and the codecs prefer it).
    init(width: Int, height: Int, chroma: ChromaFormat = .yuv420) throws(CodecError) {
        guard width >= 2, height >= 2, width <= 16384, height <= 16384 else {
            throw CodecError(.unsupportedConfiguration, "cannot encode a \(width)×\(height) picture")
        }
        self.width = width
        self.height = height
        self.chroma = chroma
        lumaStride = (width + 31) & ~31
        chromaStride = ((width + chroma.horizontalShare - 1) / chroma.horizontalShare + 31) & ~31
        let chromaRows = (height + chroma.verticalShare - 1) / chroma.verticalShare
        let lumaBytes = lumaStride * height, chromaBytes = chromaStride * chromaRows
        storage = UnsafeMutableRawPointer.allocate(byteCount: lumaBytes + 2 * chromaBytes, alignment: 64)
        // Black, so that rows no frame has converted yet (none, in practice) are not garbage.
        storage.initializeMemory(as: UInt8.self, repeating: 16, count: lumaBytes)
        (storage + lumaBytes).initializeMemory(as: UInt8.self, repeating: 128, count: 2 * chromaBytes)
        luma = storage.assumingMemoryBound(to: UInt8.self)
        blueDifference = luma + lumaBytes
        redDifference = blueDifference + chromaBytes
    }

    deinit { storage.deallocate() }

    /// Converts the parts of `frame` listed in its changed rectangles (all of it when `everything`; nothing when
    /// the list is empty, as for a keepalive of an unchanged screen) from BGRA
    /// with libyuv. Rectangles are widened to even coordinates: in 4:2:0 chroma is shared by 2×2 pixels.
    func convert(from frame: VideoFrame, everything: Bool) {
        precondition(frame.width == width && frame.height == height, "frame and picture sizes differ")
        frame.withUnsafeBytes { pixels in
            guard let base = pixels.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            if everything {
                convertRect(PixelRect(x: 0, y: 0, width: width, height: height), base, frame.bytesPerRow)
                return
            }
            for rect in frame.changedRects {
                let clipped = rect.intersection(frame.bounds)
                guard !clipped.isEmpty else { continue }
                let x = clipped.x & ~1, y = clipped.y & ~1
                let right = min(width, (clipped.maxX + 1) & ~1), bottom = min(height, (clipped.maxY + 1) & ~1)
                convertRect(PixelRect(x: x, y: y, width: right - x, height: bottom - y), base, frame.bytesPerRow)
            }
        }
    }

    private func convertRect(_ rect: PixelRect, _ source: UnsafePointer<UInt8>, _ sourceStride: Int) {
        if chroma == .yuv444 {
            ARGBToI444(
                source + rect.y * sourceStride + rect.x * 4, Int32(sourceStride),
                luma + rect.y * lumaStride + rect.x, Int32(lumaStride),
                blueDifference + rect.y * chromaStride + rect.x, Int32(chromaStride),
                redDifference + rect.y * chromaStride + rect.x, Int32(chromaStride),
                Int32(rect.width), Int32(rect.height))
            return
        }
        ARGBToI420(
            source + rect.y * sourceStride + rect.x * 4, Int32(sourceStride),
            luma + rect.y * lumaStride + rect.x, Int32(lumaStride),
            blueDifference + rect.y / 2 * chromaStride + rect.x / 2, Int32(chromaStride),
            redDifference + rect.y / 2 * chromaStride + rect.x / 2, Int32(chromaStride),
            Int32(rect.width), Int32(rect.height))
    }
}

@available(*, unavailable)
extension YUVPicture: Sendable {}

/// The BGRA picture a decoder lends to its caller, reused from one decoded frame to the next.
struct DecodedPicture {
    private var frame: VideoFrame?

    /// Converts a decoded 8-bit 4:2:0 or 4:4:4 picture (planes as the codec library lends them) to BGRA, stamps it
    /// and lends it to `body`.
    mutating func lend(
        _ decoded: LentPlanes, captureTime: MediaTime, wallClock: WallClockTime, metadata: FrameMetadata,
        _ body: (VideoFrame) throws -> Void
    ) rethrows {
        let (width, height, planes, strides) = (decoded.width, decoded.height, decoded.planes, decoded.strides)
        let picture: VideoFrame
        if let frame {
            frame.resize(width: width, height: height)
            picture = frame
        } else {
            picture = VideoFrame(width: width, height: height)
            frame = picture
        }
        picture.withUnsafeMutableBytes { pixels in
            let destination = pixels.baseAddress?.assumingMemoryBound(to: UInt8.self)
            let convert = decoded.chroma == .yuv444 ? I444ToARGB : I420ToARGB
            _ = convert(
                planes.0, Int32(strides.0), planes.1, Int32(strides.1), planes.2, Int32(strides.2),
                destination, Int32(picture.bytesPerRow), Int32(width), Int32(height))
        }
        picture.captureTime = captureTime
        picture.wallClock = wallClock
        picture.metadata = metadata
        picture.markAllChanged()
        try body(picture)
    }
}

// MARK: Privacy covers

extension YUVPicture {
    /// Paints `covers` over the picture where they overlap `areas` (everywhere when nil): the real pixels stay in
    /// the captured frame, so an area a cover leaves is converted again from there. Covers are widened to even
    /// coordinates (in 4:2:0 chroma is shared by 2×2 pixels; 4:4:4 covers the same pixels, so that a cover looks
    /// the same in both): a cover hides more, never less.
    func paint(_ covers: FrameCovers, from frame: VideoFrame, within areas: [PixelRect]?) {
        let bounds = PixelRect(x: 0, y: 0, width: width, height: height)
        for cover in covers.rects {
            let widened = evenOutward(cover).intersection(bounds)
            guard !widened.isEmpty else { continue }
            guard let areas else {
                paint(widened, of: widened, style: covers.style, frame)
                continue
            }
            for area in areas {
                let part = evenOutward(area).intersection(widened)
                if !part.isEmpty { paint(part, of: widened, style: covers.style, frame) }
            }
        }
    }

    private func evenOutward(_ rect: PixelRect) -> PixelRect {
        let x = rect.x & ~1, y = rect.y & ~1
        return PixelRect(x: x, y: y, width: ((rect.maxX + 1) & ~1) - x, height: ((rect.maxY + 1) & ~1) - y)
    }

    /// Paints `part` (even-aligned, inside `cover`) as the cover looks there: what is drawn depends only on the
    /// position within the cover, so painting a cover piece by piece gives the same picture as painting it whole.
    private func paint(_ part: PixelRect, of cover: PixelRect, style: CoverStyle, _ frame: VideoFrame) {
        switch style {
        case .solid:
            fill(part, luma: Self.coverLuma, blueDifference: 128, redDifference: 128)
        case .pixelate:
            let block = Self.pixelBlock
            var blockY = cover.y + (part.y - cover.y) / block * block
            while blockY < part.maxY {
                var blockX = cover.x + (part.x - cover.x) / block * block
                while blockX < part.maxX {
                    let whole = PixelRect(x: blockX, y: blockY, width: block, height: block).intersection(cover)
                    let (y, u, v) = averageColor(of: whole, in: frame)
                    fill(whole.intersection(part), luma: y, blueDifference: u, redDifference: v)
                    blockX += block
                }
                blockY += block
            }
        }
        drawBadge(over: part, centeredIn: cover)
    }

    static let coverLuma: UInt8 = 48
    static let pixelBlock = 32

    /// The light badge with dark diagonal stripes in the middle of a cover (when it fits): "something is here".
    private func drawBadge(over part: PixelRect, centeredIn cover: PixelRect) {
        let badgeWidth = 64, badgeHeight = 24
        guard cover.width >= badgeWidth + 8, cover.height >= badgeHeight + 8 else { return }
        let badge = PixelRect(
            x: (cover.x + (cover.width - badgeWidth) / 2) & ~1, y: (cover.y + (cover.height - badgeHeight) / 2) & ~1,
            width: badgeWidth, height: badgeHeight)
        let visible = badge.intersection(part)
        guard !visible.isEmpty else { return }
        for row in visible.y..<visible.maxY {
            let line = luma + row * lumaStride
            for column in visible.x..<visible.maxX {
                line[column] = ((column - badge.x + row - badge.y) / 6) % 2 == 0 ? 200 : 96
            }
        }
        fill(visible, luma: nil, blueDifference: 128, redDifference: 128)
    }

    /// Fills an even-aligned rectangle; `luma` nil leaves the luma plane as it is.
    private func fill(_ rect: PixelRect, luma value: UInt8?, blueDifference u: UInt8, redDifference v: UInt8) {
        if let value {
            for row in rect.y..<rect.maxY {
                (luma + row * lumaStride + rect.x).update(repeating: value, count: rect.width)
            }
        }
        let (across, down) = (chroma.horizontalShare, chroma.verticalShare)
        let samples = (rect.width + across - 1) / across
        for row in rect.y / down..<(rect.maxY + down - 1) / down {
            (blueDifference + row * chromaStride + rect.x / across).update(repeating: u, count: samples)
            (redDifference + row * chromaStride + rect.x / across).update(repeating: v, count: samples)
        }
    }

    /// The mean colour of `rect` of the BGRA frame, in BT.601 studio range as libyuv's ARGBToI420 and ARGBToI444
    /// make it.
    private func averageColor(of rect: PixelRect, in frame: VideoFrame) -> (UInt8, UInt8, UInt8) {
        let clipped = rect.intersection(frame.bounds)
        guard !clipped.isEmpty else { return (Self.coverLuma, 128, 128) }
        var (blue, green, red) = (0, 0, 0)
        frame.withUnsafeBytes { pixels in
            guard let base = pixels.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            for row in clipped.y..<clipped.maxY {
                let line = base + row * frame.bytesPerRow + clipped.x * 4
                for column in 0..<clipped.width {
                    blue += Int(line[column * 4])
                    green += Int(line[column * 4 + 1])
                    red += Int(line[column * 4 + 2])
                }
            }
        }
        let count = clipped.width * clipped.height
        let (r, g, b) = (red / count, green / count, blue / count)
        let y = (66 * r + 129 * g + 25 * b + 128) >> 8 + 16
        let u = (-38 * r - 74 * g + 112 * b + 128) >> 8 + 128
        let v = (112 * r - 94 * g - 18 * b + 128) >> 8 + 128
        return (UInt8(clamping: y), UInt8(clamping: u), UInt8(clamping: v))
    }
}
