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
