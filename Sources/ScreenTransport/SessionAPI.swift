public import Foundation
public import ScreenWire

/// The session API's answers (docs/protocol.md), one type each; ``SessionCredentials`` (ScreenWire) is what
/// `POST /session` answers.

/// One session as `GET /session` and `GET /session/{id}` describe it (docs/protocol.md).
public struct SessionSummary: Sendable, Codable, Equatable {
    public var sessionId: String
    public var title: String
    public var createdAt: Date
    /// Connections by role: publishers, subscribers (viewers) and moderators.
    public var publishers: Int
    public var viewers: Int
    public var moderators: Int
    public var streams: [Stream]
    /// The archive being recorded, if one is.
    public var recording: Recording?

    public init(
        sessionId: String, title: String, createdAt: Date, publishers: Int, viewers: Int, moderators: Int, streams: [Stream],
        recording: Recording?
    ) {
        (self.sessionId, self.title, self.createdAt) = (sessionId, title, createdAt)
        (self.publishers, self.viewers, self.moderators) = (publishers, viewers, moderators)
        (self.streams, self.recording) = (streams, recording)
    }

    public struct Stream: Sendable, Codable, Equatable {
        public var streamId: UInt32
        public var name: String
        public var videoType: String
        public var codec: String
        public var width: Int
        public var height: Int
        public var paused: Bool
        public var subscribers: Int

        public init(
            streamId: UInt32, name: String, videoType: String, codec: String, width: Int, height: Int, paused: Bool, subscribers: Int
        ) {
            (self.streamId, self.name, self.videoType, self.codec) = (streamId, name, videoType, codec)
            (self.width, self.height, self.paused, self.subscribers) = (width, height, paused, subscribers)
        }
    }

    public struct Recording: Sendable, Codable, Equatable {
        public var archiveId: String
        public var name: String

        public init(archiveId: String, name: String) { (self.archiveId, self.name) = (archiveId, name) }
    }
}

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

/// What `POST /session/{id}/token` answers.
public struct TokenMinted: Sendable, Codable, Equatable {
    public var sessionId: String
    public var token: String
    public var role: Role
    public var expiresAt: String
    /// The viewer page with this token, for subscribers and moderators (a publisher's token goes to screenpub).
    public var viewerURL: String?

    public init(sessionId: String, token: String, role: Role, expiresAt: String, viewerURL: String?) {
        self.sessionId = sessionId
        self.token = token
        self.role = role
        self.expiresAt = expiresAt
        self.viewerURL = viewerURL
    }
}
