import CVPX
import CYUV
import ScreenMedia

/// An I420 picture owned by libvpx's allocator, reused for every frame of one size.
final class I420Image {
    let image: UnsafeMutablePointer<vpx_image_t>
    let width: Int
    let height: Int

    init(width: Int, height: Int) throws(CodecError) {
        guard let image = vpx_img_alloc(nil, VPX_IMG_FMT_I420, UInt32(width), UInt32(height), 32) else {
            throw CodecError(.unsupportedConfiguration, "cannot allocate a \(width)×\(height) I420 picture")
        }
        self.image = image
        self.width = width
        self.height = height
    }

    deinit { vpx_img_free(image) }

    /// Converts the parts of `frame` listed in its changed rectangles (all of it when `everything`; nothing when
    /// the list is empty, as for a keepalive of an unchanged screen) from BGRA
    /// with libyuv. Rectangles are widened to even coordinates because chroma is subsampled 2×2.
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
        let img = image.pointee
        let yStride = Int(img.stride.0), uStride = Int(img.stride.1), vStride = Int(img.stride.2)
        guard let yPlane = img.planes.0, let uPlane = img.planes.1, let vPlane = img.planes.2 else { return }
        ARGBToI420(
            source + rect.y * sourceStride + rect.x * 4, Int32(sourceStride),
            yPlane + rect.y * yStride + rect.x, Int32(yStride),
            uPlane + rect.y / 2 * uStride + rect.x / 2, Int32(uStride),
            vPlane + rect.y / 2 * vStride + rect.x / 2, Int32(vStride),
            Int32(rect.width), Int32(rect.height))
    }
}

@available(*, unavailable)
extension I420Image: Sendable {}
