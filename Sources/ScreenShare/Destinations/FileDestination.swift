import Foundation
public import ScreenMedia
import ScreenPipeline
import ScreenTransport

/// A recording (`file:PATH`, `file:///PATH` or a plain path): AV1, VP9 or VP8 in WebM, H.264 in Matroska
/// (``RecordingContainer``), as encoded, with every frame's metadata on a timed metadata track, and the share's
/// sound as an Opus track. An existing recording is never replaced without `overwrite`.
public struct FileDestination: StreamDestination {
    public let path: String
    let framesPerSecond: Double
    let audio: AudioProperties?
    let audioPreSkip: Int

    public static let kind = DestinationKind(.file, schemes: ["file"]) { url, context in
        let path = Self.path(of: url)
        // Fail before capturing if the file cannot be created, not at the first frame.
        try probeWritable(path, overwrite: context.options.overwrite)
        return FileDestination(path: path, framesPerSecond: context.framesPerSecond, audio: context.audio, audioPreSkip: context.audioPreSkip)
    }

    public var endpoint: String { path }

    /// Why `url` cannot be written with `codec`: its name says another container than the WebM or Matroska
    /// screenpub writes, and a player would trust the name, or it says WebM of H.264. Nil when it can.
    public static func refusal(for url: String, codec: VideoCodec) -> String? {
        let path = Self.path(of: url)
        if let refusal = RecordingContainer.refusal(path: path, codec: codec) { return refusal }
        let suffix = (path as NSString).pathExtension.lowercased()
        let others = ["mp4", "m4v", "mov", "avi", "ts", "mts", "m2ts", "flv", "ogg", "ogv", "gif", "mpg", "mpeg", "wmv", "3gp", "h264", "ivf"]
        guard others.contains(suffix) else { return nil }
        let container = RecordingContainer(for: codec).fileExtension
        let named = container == "webm" ? ".webm (or .mkv)" : ".mkv"
        return "\(path): screenpub records WebM (AV1, VP9 or VP8) or Matroska (H.264), with a timed metadata track, not .\(suffix); name the file \(named), and convert it afterwards if you need .\(suffix) (ffmpeg -i FILE.\(container) -c copy FILE.\(suffix) keeps the video)"
    }

    public func makeSink() throws -> any EncodedFrameSink {
        RecordingSink(path: path, framesPerSecond: framesPerSecond, audio: audio, audioPreSkip: audioPreSkip)
    }

    public var status: DestinationStatus { DestinationStatus(kind: .file, endpoint: path) }

    /// The path a `file:` URL names (percent-escapes decoded), or the plain path.
    static func path(of url: String) -> String {
        guard url.lowercased().hasPrefix("file:") else { return url }
        let rest = String(url.dropFirst(5))
        let path = rest.hasPrefix("//") ? String(rest.dropFirst(2)) : rest
        return path.removingPercentEncoding ?? path
    }
}

/// Checks that the recording can be written, without leaving a file behind if the share then cannot start:
/// an existing recording is refused unless `overwrite`, and the file or its directory must be writable.
func probeWritable(_ path: String, overwrite: Bool) throws(ShareError) {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
        guard !isDirectory.boolValue else { throw ShareError(.cannotStart, "\(path) is a directory: give a file name") }
        if !overwrite, let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size > 0 {
            throw ShareError(.cannotStart, "\(path) exists (\(size) bytes); pass --overwrite to replace it")
        }
        guard access(path, W_OK) == 0 else { throw ShareError(.cannotStart, "cannot write \(path): check its permissions") }
        return
    }
    let directory = (path as NSString).deletingLastPathComponent
    guard access(directory.isEmpty ? "." : directory, W_OK) == 0 else {
        throw ShareError(.cannotStart, "cannot create \(path): check that its directory exists and is writable")
    }
}
