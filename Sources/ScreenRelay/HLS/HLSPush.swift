import Foundation
import Logging
import ScreenMedia
import ScreenTransport

/// Sends a session's HLS to an HTTP origin (`--hls-push URL`), the way ffmpeg's `-method PUT` does: `PUT
/// URL/{session}/…` for each new file and `DELETE` for a segment a window after it left the playlist.
/// Uploads run in order on a task of their own, so a slow origin never holds back packaging; at most
/// ``maximumBacklog`` publishes wait (past that the oldest waiting one is dropped, and said).
final class HLSPush: HLSOutput {
    static let maximumBacklog = 16

    let base: String
    var destination: String { base }
    private let http: any HTTPUploader
    private let logger: Logger?
    private let failures: RateLimitedLog?
    private let state = Locked<(pending: [HLSFiles], running: Bool, sentInitializations: Set<Int>, dropped: Int)>(([], false, [], 0))

    init(url: String, sessionId: String, client: any HTTPUploader, logger: Logger?) {
        base = (url.hasSuffix("/") ? String(url.dropLast()) : url) + "/" + sessionId
        http = client
        self.logger = logger
        failures = logger.map { RateLimitedLog(logger: $0) }
    }

    func publish(_ snapshot: HLSSnapshot, targetDuration: Int, window: Int) {
        let start = state.withLock { state -> Bool in
            let files = HLSFiles(snapshot, targetDuration: targetDuration, window: window, sentInitializations: state.sentInitializations)
            state.sentInitializations.formUnion(snapshot.initializations.keys)
            state.pending.append(files)
            if state.pending.count > Self.maximumBacklog {
                state.pending.removeFirst()
                state.dropped += 1
            }
            defer { state.running = true }
            return !state.running
        }
        if start { Task { await drain() } }
    }

    /// Sends what waits, in order, until nothing does.
    private func drain() async {
        while let files = state.withLock({ state -> HLSFiles? in
            guard !state.pending.isEmpty else {
                state.running = false
                return nil
            }
            return state.pending.removeFirst()
        }) {
            for upload in files.uploads {
                await send("PUT", upload.name, body: (Data(upload.bytes), upload.contentType))
            }
            if let stale = files.stale { await send("DELETE", stale, body: nil) }
            let dropped = state.withLock { state in
                defer { state.dropped = 0 }
                return state.dropped
            }
            if dropped > 0 { failures?.log("HLS to \(base): the origin is slower than the stream; \(dropped) update(s) skipped") }
        }
    }

    private func send(_ method: String, _ name: String, body: (data: Data, contentType: String)?) async {
        let url = base + "/" + name
        do {
            let status = try await http.upload(method, url, body: body)
            // 404 on DELETE: already gone.
            if !(200..<300).contains(status) && !(method == "DELETE" && status == 404) {
                failures?.log("HLS to \(base): \(method) \(name) answered \(status)")
            }
        } catch {
            failures?.log("HLS to \(base): \(method) \(name) failed: \(error.message)")
        }
    }
}
