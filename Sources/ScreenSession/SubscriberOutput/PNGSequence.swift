import Foundation
public import ScreenMedia
import ScreenRecording

/// Every decoded picture as DIR/frame-NNNNNN.png.
public final class PNGSequence: VideoRenderer {
    public let directory: String
    private let writer = PNGWriter()
    private var index = 0

    public init(directory: String) throws {
        self.directory = directory
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw RecordingError(.cannotOpen, "cannot create the --frames directory \(directory): \(error.localizedDescription)")
        }
    }

    public func render(_ frame: VideoFrame) throws {
        index += 1
        try writer.write(frame, to: "\(directory)/frame-\(String(format: "%06d", index)).png")
    }
}
