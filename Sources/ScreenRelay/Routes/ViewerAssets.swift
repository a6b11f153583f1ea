import Foundation

/// The browser pages' files (the live viewer: index.html, viewer.js with its modules — wire.js, session.js,
/// view.js, video-player.js, h264.js, audio-player.js, connection.js, chat-view.js, stream-list.js, archive-panel.js,
/// viewer-hls.js, hls-playlist.js — viewer-audio-worklet.js and viewer.css; the archive view: archive.html, archive.js), read once
/// at start.
///
/// They ship as a SwiftPM resource directory beside the executable (`screenpub_ScreenRelay.resources/Viewer`)
/// or, installed, in `share/screenpub/viewer` next to `bin/`; `SCREENRELAY_VIEWER_DIR` overrides both.
/// SwiftPM's `Bundle.module` is not used because it traps when the bundle is missing, and a relay without
/// its viewer must still relay (the page then answers with an error naming where it looked).
struct ViewerAssets: Sendable {
    struct Asset: Sendable {
        var contentType: String
        var bytes: [UInt8]
    }

    static let files: [(name: String, contentType: String)] = [
        ("index.html", "text/html; charset=utf-8"),
        ("viewer.js", "text/javascript; charset=utf-8"),
        ("wire.js", "text/javascript; charset=utf-8"),
        ("view.js", "text/javascript; charset=utf-8"),
        ("session.js", "text/javascript; charset=utf-8"),
        ("video-player.js", "text/javascript; charset=utf-8"),
        ("h264.js", "text/javascript; charset=utf-8"),
        ("audio-player.js", "text/javascript; charset=utf-8"),
        ("connection.js", "text/javascript; charset=utf-8"),
        ("chat-view.js", "text/javascript; charset=utf-8"),
        ("stream-list.js", "text/javascript; charset=utf-8"),
        ("archive-panel.js", "text/javascript; charset=utf-8"),
        ("viewer-hls.js", "text/javascript; charset=utf-8"),
        ("hls-playlist.js", "text/javascript; charset=utf-8"),
        ("viewer-audio-worklet.js", "text/javascript; charset=utf-8"),
        ("viewer.css", "text/css; charset=utf-8"),
        ("archive.html", "text/html; charset=utf-8"),
        ("archive.js", "text/javascript; charset=utf-8"),
    ]

    let directory: String?
    let searched: [String]
    private let assets: [String: Asset]

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let executableDirectory = Bundle.main.executableURL?.deletingLastPathComponent() ?? Bundle.main.bundleURL
        var candidates: [URL] = []
        if let override = environment["SCREENRELAY_VIEWER_DIR"], !override.isEmpty {
            candidates.append(URL(fileURLWithPath: override))
        }
        candidates.append(Bundle.main.bundleURL.appendingPathComponent("screenpub_ScreenRelay.resources/Viewer"))
        candidates.append(executableDirectory.appendingPathComponent("screenpub_ScreenRelay.resources/Viewer"))
        candidates.append(executableDirectory.appendingPathComponent("../share/screenpub/viewer").standardized)
        searched = candidates.map(\.path)
        for candidate in candidates {
            var loaded: [String: Asset] = [:]
            for file in Self.files {
                guard let data = FileManager.default.contents(atPath: candidate.appendingPathComponent(file.name).path) else { break }
                loaded[file.name] = Asset(contentType: file.contentType, bytes: Array(data))
            }
            if loaded.count == Self.files.count {
                directory = candidate.path
                assets = loaded
                return
            }
        }
        directory = nil
        assets = [:]
    }

    subscript(name: String) -> Asset? { assets[name] }
}
