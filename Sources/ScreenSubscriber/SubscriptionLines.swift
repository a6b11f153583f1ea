import Foundation
public import ScreenSession
public import ScreenWire

/// What `screensub --server` prints about the subscription besides frames, as text for people or (`--json`) one
/// JSON object a line for scripts.
public enum SubscriptionLines {
    /// The session has no stream yet.
    public static func waiting(sessionId: String, json: Bool) -> String {
        json ? #"{"event":"waiting","sessionId":"\#(sessionId)"}"# : "session \(sessionId): waiting for a screen to be shared…"
    }

    /// The stream chosen (text only: JSON readers learn it from the frames).
    public static func stream(_ stream: StreamInfo, sessionId: String, json: Bool) -> String? {
        guard !json else { return nil }
        let p = stream.properties
        let sound = p.audio.map { ", \($0.codec) \($0.channels == 1 ? "mono" : "stereo")\(p.hasAudio ? "" : " (muted)")" } ?? ""
        return "session \(sessionId): stream \(stream.streamId) \"\(stream.name)\", \(p.videoType) \(p.width)×\(p.height) \(p.codec) ~\(p.estimatedFramesPerSecond) fps\(sound)\(p.hasVideo ? "" : ", paused")"
    }

    /// Its publisher paused or resumed it, muted its sound or changed its frame rate.
    public static func propertiesChanged(_ stream: StreamInfo, json: Bool) -> String? {
        let p = stream.properties
        guard json else {
            let sound = p.audio == nil ? "" : p.hasAudio ? ", sound on" : ", sound muted"
            return "stream \(stream.streamId): \(p.hasVideo ? "video on" : "paused by the publisher (last picture kept)")\(sound), ~\(p.estimatedFramesPerSecond) fps"
        }
        let object: [String: Any] = [
            "event": "streamPropertyChanged", "streamId": Int(stream.streamId), "hasVideo": p.hasVideo, "hasAudio": p.hasAudio,
            "estimatedFramesPerSecond": p.estimatedFramesPerSecond,
        ]
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The relay thinned what it sends this subscriber, or sends all of it again.
    public static func receptionChanged(_ reception: Reception, streamFramesPerSecond: Double, json: Bool) -> String {
        guard json else { return reception.message(streamFramesPerSecond: streamFramesPerSecond) }
        return #"{"event":"subscriptionChanged","highestLayer":\#(reception.highestLayer),"layers":\#(reception.layers),"waitingForKeyframe":\#(reception.waitingForKeyframe)}"#
    }

    /// The last line: what arrived and how the subscription ended.
    public static func summary(_ summary: SubscriptionSummary, json: Bool) -> String {
        if json {
            let rendition = summary.rendition.map { #","rendition":"\#($0.rawValue)""# } ?? ""
            return #"{"kind":"summary","framesReceived":\#(summary.framesReceived),"framesRendered":\#(summary.framesRendered),"catchUpFrames":\#(summary.catchUpFrames),"staleFrames":\#(summary.staleFrames),"audioFramesReceived":\#(summary.audioFramesReceived)\#(rendition)}"#
        }
        let sound = summary.audioFramesReceived > 0 ? ", \(summary.audioFramesReceived) audio frames" : ""
        let catchUp = summary.catchUpFrames > 0 ? ", \(summary.catchUpFrames) catch-up" : ""
        let rendition = summary.rendition.map { " (its \($0.displayName) rendition)" } ?? ""
        return "\(summary.framesReceived) frames received\(rendition), \(summary.framesRendered) decoded\(sound)\(catchUp); \(summary.ending)"
    }

    /// Why screensub exits 1 after the summary when the relay went away.
    public static func connectionLost(_ summary: SubscriptionSummary) -> String {
        "the relay closed the connection before the stream ended; what arrived was kept (\(summary.framesReceived) frames)"
    }
}
