import Foundation

/// Where a session's HLS goes besides the relay's own answers: a directory (`--hls-dir`) or an HTTP origin
/// (`--hls-push`). Called on the packager's queue after each segment, with the window as it now is.
protocol HLSOutput: Sendable {
    /// Where it goes, for messages.
    var destination: String { get }
    func publish(_ snapshot: HLSSnapshot, targetDuration: Int, window: Int) throws
}

/// The files of one publish: what is new (initialization segments not sent yet, the newest segment), the
/// playlists, and the segment that has now been out of the playlist for a whole window.
struct HLSFiles {
    var uploads: [(name: String, bytes: [UInt8], contentType: String)] = []
    var stale: String?

    init(_ snapshot: HLSSnapshot, targetDuration: Int, window: Int, sentInitializations: Set<Int>) {
        for (index, bytes) in snapshot.initializations.sorted(by: { $0.key < $1.key }) where !sentInitializations.contains(index) {
            uploads.append(("init-\(index).mp4", bytes, "video/mp4"))
        }
        if let newest = snapshot.segments.last { uploads.append(("seg-\(newest.sequence).m4s", newest.bytes, "video/iso.segment")) }
        uploads.append(("stream.m3u8", Array(HLSPlaylist.media(snapshot, targetDuration: targetDuration, query: "").utf8), "application/vnd.apple.mpegurl"))
        uploads.append(("index.m3u8", Array(HLSPlaylist.multivariant(snapshot, query: "").utf8), "application/vnd.apple.mpegurl"))
        if let oldest = snapshot.segments.first, oldest.sequence - window >= 0 { stale = "seg-\(oldest.sequence - window).m4s" }
    }
}

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
