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

    public struct Stream: Sendable, Codable, Equatable {
        public var streamId: UInt32
        public var name: String
        public var videoType: String
        public var codec: String
        public var width: Int
        public var height: Int
        public var paused: Bool
        public var subscribers: Int
    }

    public struct Recording: Sendable, Codable, Equatable {
        public var archiveId: String
        public var name: String
    }
}
