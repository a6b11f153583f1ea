import Foundation

/// Writes a session's HLS to a directory any web server can serve (`--hls-dir`): `DIR/{session}/index.m3u8`,
/// `stream.m3u8`, `init-N.mp4` and `seg-N.m4s`, the same files the relay serves itself. Each file is written
/// to a temporary name and renamed, so a server never sends half of one; segments are written before the
/// playlist that names them, and removed once they have been out of the playlist for a whole window (a player
/// that read an older playlist can still fetch them). Initialization segments (one per picture size) stay.
final class HLSDirectory: HLSOutput {
    let directory: String
    var destination: String { directory }

    init(root: String, sessionId: String) throws {
        directory = root + "/" + sessionId
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw RelayError(.storage, "cannot create the HLS directory \(directory): \(error.localizedDescription)")
        }
    }

    func publish(_ snapshot: HLSSnapshot, targetDuration: Int, window: Int) throws {
        let written = Set(snapshot.initializations.keys.filter { FileManager.default.fileExists(atPath: path("init-\($0).mp4")) })
        let files = HLSFiles(snapshot, targetDuration: targetDuration, window: window, sentInitializations: written)
        for upload in files.uploads { try write(upload.bytes, to: upload.name) }
        if let stale = files.stale { unlink(path(stale)) }
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
