import Foundation
public import ScreenMedia

/// Pictures as ffmpeg (Debian's, with its own decoders: libdav1d, libvpx) decodes them from a file, a PNG or an
/// HLS playlist: an outside check of what screenpub writes.
public enum FFmpegPicture {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The last of the first `frames` pictures of `input`, `width` × `height`, as a BGRA frame.
    public static func last(of input: String, width: Int, height: Int, frames: Int = 100) async throws -> VideoFrame {
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent("ffmpeg-\(UUID().uuidString).bgra").path
        defer { try? FileManager.default.removeItem(atPath: raw) }
        let decoded = try await ChildProcess.run(
            "/usr/bin/ffmpeg", ["-v", "error", "-y", "-i", input, "-frames:v", String(frames), "-f", "rawvideo", "-pix_fmt", "bgra", raw],
            timeout: 60)
        let bytes = (try? Data(contentsOf: URL(fileURLWithPath: raw))) ?? Data()
        let size = width * height * 4
        guard decoded.status == 0, bytes.count >= size, bytes.count % size == 0 else {
            throw Failure(description: "ffmpeg decoded \(bytes.count) bytes of \(input) (status \(decoded.status)): \(decoded.standardError)")
        }
        let frame = VideoFrame(width: width, height: height)
        // Both buffers hold at least `size` bytes (checked above), so both have a base address.
        frame.withUnsafeMutableBytes { pixels in
            bytes.suffix(size).withUnsafeBytes { source in
                for row in 0..<height {
                    (pixels.baseAddress! + row * frame.bytesPerRow).copyMemory(from: source.baseAddress! + row * width * 4, byteCount: width * 4)
                }
            }
        }
        return frame
    }

    /// ffprobe's `pix_fmt` and `profile` of the first video stream of `input` ("yuv444p", "High").
    public static func format(of input: String) async throws -> (pixelFormat: String, profile: String) {
        let probe = try await ChildProcess.run(
            "/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=pix_fmt,profile", "-of", "default=nw=1", input],
            timeout: 30)
        var fields: [String: String] = [:]
        for line in probe.standardOutput.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        return (fields["pix_fmt"] ?? "", fields["profile"] ?? "")
    }
}
