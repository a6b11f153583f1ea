import Foundation
import ScreenMedia

/// The reply to every control command (docs/protocol.md, "Control socket").
public struct ShareStatus: Codable, Sendable, Equatable {
    public var ok: Bool
    /// sharing, paused, waitingForDisplay, connecting, reconnecting, stopping.
    public var state: String?
    public var pid: Int?
    public var target: String?
    public var display: String?
    /// The first relay destination's endpoint and connection (what most people share to).
    public var relay: String?
    public var connected: Bool?
    public var lastProblem: String?
    public var sessionId: String?
    public var streamId: Int?
    public var viewerURL: String?
    /// Other connections in the relay session (browser viewers, screensub).
    public var viewers: Int?
    /// The first file destination.
    public var output: String?
    /// Every destination.
    public var destinations: [DestinationStatus]?
    public var framesPerSecond: Double?
    /// The sound shared ("the desktop's sound", …), whether it is muted, and what was sent.
    public var audio: String?
    public var muted: Bool?
    public var audioFramesSent: Int?
    public var audioBytesSent: Int?
    /// Measured time from a sound being captured to its frame being sent, in ms.
    public var audioCaptureDelayMilliseconds: Double?
    public var codec: String?
    /// "420" or "444", as the stream's keyframes declare it; absent before the first.
    public var chroma: String?
    public var bitrateKbps: Int?
    /// What the encoder aims at now (below `bitrateKbps` when the uplink carries less), and why.
    public var targetKbps: Int?
    public var rateReason: String?
    /// Frames skipped before encoding while the network still carried earlier ones (their changes went with
    /// the next frame), and encoded frames dropped on the way to a destination.
    public var framesHeld: Int?
    public var framesDropped: Int?
    /// One changed frame in this many is coded (more than 1 while the machine is too busy to code them all).
    public var encodeStride: Int?
    /// `--mask-window` patterns in force, `--mask-region` rectangles, `--mask-style`, and how many windows are
    /// hidden now.
    public var maskWindows: [String]?
    public var maskRegions: [String]?
    public var maskStyle: String?
    public var windowsCovered: Int?
    /// Encoded frames per second and kbit/s over the last few seconds.
    public var measuredFramesPerSecond: Double?
    public var measuredKbps: Double?
    public var framesEncoded: Int?
    public var bytesEncoded: Int?
    public var uptimeSeconds: Int?
    public var error: String?

    public init(ok: Bool) { self.ok = ok }

    public static func failure(_ message: String) -> ShareStatus {
        var status = ShareStatus(ok: false)
        status.error = message
        return status
    }

    /// `screenpub status` for people.
    public var description: String {
        func format(_ value: Double?) -> String { value.map { String(format: "%.1f", $0) } ?? "?" }
        let seconds = uptimeSeconds ?? 0
        let uptime = seconds >= 3600
            ? String(format: "%d:%02d:%02d", seconds / 3600, seconds / 60 % 60, seconds % 60)
            : String(format: "%d:%02d", seconds / 60, seconds % 60)
        var lines = ["state:   \(state ?? "?") (pid \(pid.map(String.init) ?? "?"), up \(uptime))"]
        lines.append("capture: \(target ?? "?") of \(display ?? "?"), \(codec ?? "?")\(chroma.flatMap(ChromaFormat.init(rawValue:)).map { " " + $0.displayName } ?? "") at \(format(framesPerSecond)) fps, \(bitrateKbps.map(String.init) ?? "?") kbit/s target")
        if let audio {
            lines.append("sound:   \(audio)\(muted == true ? " (muted)" : ""), \(audioFramesSent ?? 0) frames, \(audioBytesSent ?? 0) bytes sent")
        }
        for destination in destinations ?? [] {
            let label = (destination.kind == .file ? "output" : destination.kind.rawValue) + ":"
            let connection = destination.connected.map { connected in
                connected ? " (connected)" : " (not connected\(destination.lastProblem.map { ": \($0)" } ?? ""))"
            }
            lines.append(label.padding(toLength: max(9, label.count + 1), withPad: " ", startingAt: 0) + destination.endpoint + (connection ?? ""))
        }
        if maskWindows?.isEmpty == false || maskRegions?.isEmpty == false {
            var parts: [String] = []
            if let windows = maskWindows, !windows.isEmpty {
                parts.append("windows \(windows.joined(separator: ", ")) (\(windowsCovered ?? 0) hidden now)")
            }
            if let regions = maskRegions, !regions.isEmpty { parts.append("regions \(regions.joined(separator: "; "))") }
            lines.append("masks:   \(parts.joined(separator: "; ")), \(maskStyle ?? "solid")")
        }
        if let targetKbps {
            lines.append("rate:    \(targetKbps) kbit/s of \(bitrateKbps.map(String.init) ?? "?"): \(rateReason ?? "?"); \(framesHeld ?? 0) frames held back, \(framesDropped ?? 0) dropped")
        }
        if let stride = encodeStride, stride > 1 {
            lines.append("load:    coding 1 changed frame in \(stride): encoding took most of the frame interval (the machine is busy)")
        }
        if let sessionId { lines.append("session: \(sessionId)") }
        if let viewerURL { lines.append("viewer:  \(viewerURL)") }
        if let viewers { lines.append("viewers: \(viewers)") }
        lines.append("sending: \(format(measuredFramesPerSecond)) fps, \(format(measuredKbps)) kbit/s; \(framesEncoded ?? 0) frames, \(bytesEncoded ?? 0) bytes in all")
        return lines.joined(separator: "\n")
    }
}
