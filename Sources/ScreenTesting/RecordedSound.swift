import Foundation

/// The sound of a recording as samples, for checking what was heard.
public enum RecordedSound {
    /// The first audio stream of `path`, decoded by ffmpeg to mono 32-bit floats at the stream's rate, laid out by
    /// the packets' timestamps (`aresample=async=1`): a gap (samples the capture lost on a starved machine) stays
    /// a gap of silence instead of pulling what follows earlier, which would raise a tone's frequency.
    public static func monoSamples(of path: String) async throws -> [Float] {
        let raw = path + ".f32"
        defer { try? FileManager.default.removeItem(atPath: raw) }
        let decoded = try await ChildProcess.run(
            "/usr/bin/ffmpeg", ["-v", "error", "-y", "-i", path, "-map", "0:a", "-af", "aresample=async=1", "-ac", "1", "-f", "f32le", raw],
            timeout: 60)
        guard decoded.status == 0 else {
            throw ChildProcess.Failure(description: "ffmpeg could not decode the sound of \(path): \(decoded.standardError)")
        }
        return try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }
}
