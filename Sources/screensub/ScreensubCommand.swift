import ArgumentParser
import Foundation
import ScreenCodec
import ScreenMedia
import ScreenRecording

@main
struct ScreensubCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "screensub",
        abstract: "Read a screenpub stream back: per-frame metadata and timing, decoded with libvpx.",
        discussion: """
            screensub --input share.webm --print-metadata lists every frame of a recording with its capture time \
            and metadata (from the WebM's timed metadata track). Frames are decoded with libvpx, so a corrupt \
            stream is reported.

            Exit status: 0 success; 1 the file could not be read or a frame could not be decoded; 64 invalid \
            command line.
            """,
        version: "0.1.0")

    @Option(help: "A WebM recording made by screenpub (or any VP8/VP9 WebM).")
    var input: String

    @Flag(help: "Print each frame's index, time, type, size, capture time and metadata.")
    var printMetadata = false

    @Flag(help: "Print one JSON object per frame instead of text.")
    var json = false

    @Flag(help: "Do not decode the frames (only read the container).")
    var noDecode = false

    func run() throws {
        do {
            let reader = try WebMReader(path: input)
            let decoder = noDecode ? nil : try VPXDecoder(codec: reader.codec)
            if !json {
                print("\(input): \(reader.codec) \(reader.width)×\(reader.height), metadata track: \(reader.hasMetadataTrack ? "yes" : "no")")
            }
            var frames = 0, keyframes = 0, decoded = 0
            var lastSize = (0, 0)
            while let frame = try reader.nextFrame() {
                frames += 1
                if frame.isKeyframe { keyframes += 1 }
                if let decoder {
                    try frame.payload.withUnsafeBytes { payload in
                        try decoder.decode(payload) { picture in
                            decoded += 1
                            lastSize = (picture.width, picture.height)
                        }
                    }
                }
                if printMetadata { printFrame(frame, size: lastSize) }
            }
            if !json {
                print("\(frames) frames, \(keyframes) keyframes" + (decoder != nil ? ", \(decoded) decoded" : ""))
            }
        } catch {
            FileHandle.standardError.write(Data("screensub: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }

    private func printFrame(_ frame: RecordedFrame, size: (Int, Int)) {
        let metadata = frame.cue?.metadata
        if json {
            var object: [String: Any] = [
                "index": frame.index, "time": frame.timestamp.seconds, "keyframe": frame.isKeyframe,
                "bytes": frame.payload.count,
            ]
            if let cue = frame.cue {
                object["captureTime"] = cue.captureTime.description
                object["wallClock"] = FrameMetadata.iso8601(cue.wallClock).text
                object["metadataBase64"] = Data(cue.metadata.bytes).base64EncodedString()
                if let text = cue.metadata.text { object["metadata"] = text }
            }
            if size.0 > 0 { object["width"] = size.0; object["height"] = size.1 }
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
                print(String(decoding: data, as: UTF8.self))
            }
            return
        }
        var line = String(format: "frame %5d  t=%8.3fs  %@  %7d B", frame.index, frame.timestamp.seconds,
                          frame.isKeyframe ? "key  " : "delta", frame.payload.count)
        if let cue = frame.cue {
            line += "  capture=\(cue.captureTime)  wall=\(FrameMetadata.iso8601(cue.wallClock))"
            line += "  metadata=" + (metadata?.text.map { "\"\($0)\"" } ?? "0x\(metadata?.description ?? "")")
        } else {
            line += "  (no metadata cue)"
        }
        print(line)
    }
}
