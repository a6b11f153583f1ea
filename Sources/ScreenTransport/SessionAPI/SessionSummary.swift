public import Foundation

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
