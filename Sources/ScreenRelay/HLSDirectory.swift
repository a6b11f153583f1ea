import Foundation

/// Writes a session's HLS to a directory any web server can serve (`--hls-dir`): `DIR/{session}/index.m3u8`,
/// `stream.m3u8`, `init-N.mp4` and `seg-N.m4s`, the same files the relay serves itself. Each file is written
/// to a temporary name and renamed, so a server never sends half of one; segments are written before the
/// playlist that names them, and removed once they have been out of the playlist for a whole window (a player
/// that read an older playlist can still fetch them). Initialization segments (one per picture size) stay.
final class HLSDirectory: Sendable {
    let directory: String

    init(root: String, sessionId: String) throws {
        directory = root + "/" + sessionId
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw RelayError(.storage, "cannot create the HLS directory \(directory): \(error.localizedDescription)")
        }
    }

    /// Called on the packager's queue after each segment: the new files, then the playlists, then the cleanup.
    func publish(_ snapshot: HLSPackager.Snapshot, targetDuration: Int, window: Int) throws {
        for (index, bytes) in snapshot.initializations where !FileManager.default.fileExists(atPath: path("init-\(index).mp4")) {
            try write(bytes, to: "init-\(index).mp4")
        }
        if let newest = snapshot.segments.last { try write(newest.bytes, to: "seg-\(newest.sequence).m4s") }
        try write(Array(HLSPlaylist.media(snapshot, targetDuration: targetDuration, query: "").utf8), to: "stream.m3u8")
        try write(Array(HLSPlaylist.multivariant(snapshot, query: "").utf8), to: "index.m3u8")
        if let oldest = snapshot.segments.first, oldest.sequence - window >= 0 { unlink(path("seg-\(oldest.sequence - window).m4s")) }
    }

    private func path(_ name: String) -> String { directory + "/" + name }

    private func write(_ bytes: [UInt8], to name: String) throws {
        let temporary = path(".\(name).tmp")
        guard FileManager.default.createFile(atPath: temporary, contents: Data(bytes)), rename(temporary, path(name)) == 0 else {
            unlink(temporary)
            throw RelayError(.storage, "cannot write \(path(name)): \(String(cString: strerror(errno)))")
        }
    }
}
