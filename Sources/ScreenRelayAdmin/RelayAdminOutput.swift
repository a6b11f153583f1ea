public import Foundation
public import ScreenTransport
public import ScreenWire
import ScreenService


/// How the admin commands print what the relay answers: tables and lines for people, JSON (`--json`) for scripts.
public enum RelayAdminOutput {
    public static func json(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(value)) ?? Data("null".utf8), as: UTF8.self)
    }

    public static func created(_ session: SessionCredentials) -> String {
        """
        session: \(session.sessionId)
        relay:   \(session.relayURL)
        viewer:  \(session.viewerURL)
        publish: screenpub --server \(baseURL(of: session.relayURL)) --token \(session.token)
        """
    }

    public static func minted(_ token: TokenMinted) -> String {
        var lines = ["token:   \(token.token)", "role:    \(token.role.rawValue), valid until \(token.expiresAt)"]
        if let viewer = token.viewerURL { lines.append("viewer:  \(viewer)") }
        return lines.joined(separator: "\n")
    }

    public static func sessions(_ sessions: [SessionSummary], now: Date = Date()) -> String {
        guard !sessions.isEmpty else { return "no sessions" }
        return TextTable.render(
            header: ["SESSION", "AGE", "PUBLISHING", "VIEWERS", "RECORDING", "TITLE"],
            rows: sessions.map { session in
                let screens = session.streams.map { stream in
                    "\(stream.codec) \(stream.width)x\(stream.height)\(stream.paused ? " paused" : "")"
                }
                return [
                    session.sessionId, age(since: session.createdAt, now: now), screens.isEmpty ? "-" : screens.joined(separator: ", "),
                    "\(session.viewers)", session.recording.map { $0.archiveId } ?? "-", session.title,
                ]
            })
    }

    public static func archives(_ archives: [Archive]) -> String {
        guard !archives.isEmpty else { return "no archives" }
        return TextTable.render(
            header: ["ARCHIVE", "SESSION", "STATUS", "DURATION", "SIZE", "CREATED", "NAME"],
            rows: archives.map { archive in
                [
                    archive.id, archive.sessionId, archive.status.rawValue, clock(archive.duration), bytes(archive.size),
                    ISO8601DateFormatter().string(from: archive.createdAt), archive.name,
                ]
            })
    }

    public static func archive(_ archive: Archive) -> String {
        "archive \(archive.id) of session \(archive.sessionId): \(archive.status.rawValue), \(clock(archive.duration)), \(bytes(archive.size))"
            + (archive.reason.isEmpty ? "" : " (\(archive.reason))")
    }

    /// `ws://host:port/ws` → `http://host:port` (what `screenpub --server` takes).
    static func baseURL(of relayURL: String) -> String {
        var base = relayURL
        if base.hasSuffix("/ws") { base.removeLast(3) }
        if base.hasPrefix("wss://") { return "https://" + base.dropFirst(6) }
        if base.hasPrefix("ws://") { return "http://" + base.dropFirst(5) }
        return base
    }

    static func age(since date: Date, now: Date) -> String {
        let seconds = max(0, Int(now.timeIntervalSince(date)))
        if seconds < 60 { return "\(seconds)s" }
        if seconds < 3600 { return "\(seconds / 60)m" }
        if seconds < 86400 { return "\(seconds / 3600)h\(seconds % 3600 / 60)m" }
        return "\(seconds / 86400)d\(seconds % 86400 / 3600)h"
    }

    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        return String(format: "%d:%02d:%02d", whole / 3600, whole % 3600 / 60, whole % 60)
    }

    /// `512 B`, `3.4 kB`, `12.0 MB` (decimal units, as `ls -h --si`).
    static func bytes(_ count: Int) -> String {
        guard count >= 1000 else { return "\(count) B" }
        var value = Double(count) / 1000
        for unit in ["kB", "MB", "GB"] {
            if value < 1000 { return String(format: "%.1f", value) + " " + unit }
            value /= 1000
        }
        return String(format: "%.1f TB", value)
    }
}

/// Lifetimes as people write them: `90` or `90s`, `15m`, `2h`, `7d`.
public enum Lifetime {
    public static func seconds(_ text: String) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        guard let last = trimmed.last else { return nil }
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        let (number, unit) = units[last].map { (trimmed.dropLast(), $0) } ?? (Substring(trimmed), 1)
        guard let value = Double(number), value > 0, value.isFinite else { return nil }
        return value * unit
    }
}
