import CAVFormat
import Foundation
public import ScreenMedia

/// Writes pictures as PNG files with libavcodec's PNG encoder (screens are opaque: RGB, 8 bits per channel).
/// One writer belongs to one thread; it reuses its encoder and buffers while the size stays the same.
public final class PNGWriter {
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var picture: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var size = (width: 0, height: 0)

    public init() {}

    deinit { close() }

    /// Encodes `frame` and writes it to `path` (replacing a file there).
    public func write(_ frame: VideoFrame, to path: String) throws(RecordingError) {
        if size != (frame.width, frame.height) || context == nil { try open(width: frame.width, height: frame.height) }
        guard let context, let picture, let packet else { throw RecordingError(.writeFailed, "the PNG encoder is not open") }
        guard av_frame_make_writable(picture) >= 0 else { throw RecordingError(.writeFailed, "cannot write the PNG picture buffer") }
        // BGRA → RGB, row by row.
        // An allocated frame made writable has its first plane.
        let destination = picture.pointee.data.0!
        let destinationStride = Int(picture.pointee.linesize.0)
        // A frame's pixel buffer is never empty (at least 1×1), so it has a base address.
        frame.withUnsafeBytes { (pixels: UnsafeRawBufferPointer) in
            for y in 0..<frame.height {
                let source = pixels.baseAddress!.advanced(by: y * frame.bytesPerRow).assumingMemoryBound(to: UInt8.self)
                let row = destination.advanced(by: y * destinationStride)
                for x in 0..<frame.width {
                    row[x * 3] = source[x * 4 + 2]
                    row[x * 3 + 1] = source[x * 4 + 1]
                    row[x * 3 + 2] = source[x * 4]
                }
            }
        }
        var status = avcodec_send_frame(context, picture)
        guard status >= 0 else { throw RecordingError(.writeFailed, "PNG encoding failed: \(avErrorText(status))") }
        status = avcodec_receive_packet(context, packet)
        guard status >= 0 else { throw RecordingError(.writeFailed, "PNG encoding failed: \(avErrorText(status))") }
        defer { av_packet_unref(packet) }
        let bytes = UnsafeRawBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size))
        let temporary = path + ".part"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(bytes)) else {
            throw RecordingError(.writeFailed, "cannot write \(temporary): \(String(cString: strerror(errno)))")
        }
        // Renamed into place, so a reader never sees half a picture.
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw RecordingError(.writeFailed, "cannot rename \(temporary) to \(path): \(String(cString: strerror(errno)))")
        }
    }

    private func open(width: Int, height: Int) throws(RecordingError) {
        close()
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_PNG) else {
            throw RecordingError(.unsupportedContent, "this libavcodec has no PNG encoder")
        }
        context = avcodec_alloc_context3(codec)
        picture = av_frame_alloc()
        packet = av_packet_alloc()
        guard let context, let picture, packet != nil else { throw RecordingError(.writeFailed, "out of memory for the PNG encoder") }
        context.pointee.width = Int32(width)
        context.pointee.height = Int32(height)
        context.pointee.pix_fmt = AV_PIX_FMT_RGB24
        context.pointee.time_base = AVRational(num: 1, den: 1)
        // Fast compression: PNG dumps are for looking at and comparing, not archiving.
        context.pointee.compression_level = 1
        let status = avcodec_open2(context, codec, nil)
        guard status >= 0 else { throw RecordingError(.unsupportedContent, "cannot open the PNG encoder: \(avErrorText(status))") }
        picture.pointee.width = Int32(width)
        picture.pointee.height = Int32(height)
        picture.pointee.format = AV_PIX_FMT_RGB24.rawValue
        guard av_frame_get_buffer(picture, 0) >= 0 else { throw RecordingError(.writeFailed, "out of memory for a PNG picture") }
        size = (width, height)
    }

    private func close() {
        if context != nil { avcodec_free_context(&context) }
        if picture != nil { av_frame_free(&picture) }
        if packet != nil { av_packet_free(&packet) }
        size = (0, 0)
    }
}

@available(*, unavailable, message: "a libavcodec context belongs to one thread")
extension PNGWriter: Sendable {}
