public import Foundation

/// One recording of a session, as `GET /archive/{id}` returns it.
public struct Archive: Sendable, Hashable, Codable {
    public enum Status: String, Sendable, Codable {
        /// Frames are being written.
        case started
        /// Recording ended without a finished file (the relay stopped mid-recording); what was written plays.
        case stopped
        /// Finished: the file is complete and its size and sha256 are known.
        case available
        /// Recording failed (a write error, a full disk); `reason` says why. Frames written before stay readable.
        case failed
    }

    public var id: String
    public var sessionId: String
    public var name: String
    public var status: Status
    public var reason: String
    public var createdAt: Date
    /// Seconds from the first to the last frame recorded.
    public var duration: Double
    /// Bytes on disk (all streams).
    public var size: Int
    /// Streams recorded (one WebM each).
    public var streams: Int
    /// `WIDTHxHEIGHT` of the first stream, or empty before its first frame.
    public var resolution: String
    /// Of the first stream's file, once available.
    public var sha256: String?

    public init(
        id: String, sessionId: String, name: String, status: Status, reason: String, createdAt: Date, duration: Double, size: Int,
        streams: Int, resolution: String, sha256: String?
    ) {
        (self.id, self.sessionId, self.name, self.status, self.reason) = (id, sessionId, name, status, reason)
        (self.createdAt, self.duration, self.size, self.streams) = (createdAt, duration, size, streams)
        (self.resolution, self.sha256) = (resolution, sha256)
    }
}
