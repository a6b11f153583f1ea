import ScreenCodec
public import ScreenMedia
import ScreenRecording
public import ScreenService
import ScreenSession

/// `screensub --input FILE`: reads a WebM recording frame by frame, decoding each (so that a corrupt one is
/// said), and prints the file's line, with `--print-metadata` each frame's, and the count; `--frames` writes
/// every decoded picture as a PNG.
public struct RecordingDump: Sendable {
    public let path: String
    public let decodes: Bool
    public let framesDirectory: String?
    public let printsMetadata: Bool
    public let json: Bool

    public func run(output: JobOutput) throws(CommandFailure) {
        do {
            try read(output.line)
        } catch {
            throw CommandFailure(ExitStatus.runtimeFailure, "\(error)")
        }
    }

    private func read(_ emit: (String) -> Void) throws {
        let reader = try WebMReader(path: path)
        let decoder = decodes ? try makeVideoDecoder(for: reader.codec) : nil
        let pictures = try framesDirectory.map { try PNGSequence(directory: $0) }
        if !json {
            emit("\(path): \(reader.codec) \(reader.width)×\(reader.height), metadata track: \(reader.hasMetadataTrack ? "yes" : "no")")
        }
        var frames = 0, keyframes = 0, decoded = 0
        var lastSize = (0, 0)
        while let frame = try reader.nextFrame() {
            frames += 1
            if frame.isKeyframe { keyframes += 1 }
            if let decoder {
                try frame.payload.withUnsafeBytes { payload in
                    try decoder.decode(
                        payload, captureTime: frame.cue?.captureTime ?? frame.timestamp,
                        wallClock: frame.cue?.wallClock ?? WallClockTime(secondsSince1970: 0, nanoseconds: 0),
                        metadata: frame.cue?.metadata ?? .empty
                    ) { picture in
                        decoded += 1
                        lastSize = (picture.width, picture.height)
                        try pictures?.render(picture)
                    }
                }
            }
            if printsMetadata { emit(RecordedFramePrinter.line(frame, size: lastSize, json: json)) }
        }
        if !json {
            emit("\(frames) frames, \(keyframes) keyframes" + (decoder != nil ? ", \(decoded) decoded" : ""))
        }
    }
}
