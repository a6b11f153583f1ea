import Foundation

/// How much disk recordings may take: each recording, each session's archives together, and all the relay's,
/// and the free space left on the disk. A recording cannot start past them (507), and one that reaches them
/// while recording stops there, its files finished and playable, as `available` with the reason (LiveKit Egress
/// ends a recording at its size limit the same way).
public struct ArchiveLimits: Sendable {
    /// One recording's files together (`--archive-max-size`, MiB): 2 GiB, some 3 hours of 1080p text at 1.5 Mbit/s.
    public var recordingBytes: Int64
    /// A session's archives together (`--archive-session-quota`): 8 GiB.
    public var sessionBytes: Int64
    /// All archives of the relay (`--archive-quota`): 50 GiB.
    public var relayBytes: Int64
    /// Free space left on the data directory's disk (`--archive-free-space`): 1 GiB, so that the archive index and
    /// the rest of the machine still have room.
    public var freeSpaceBytes: Int64

    public init(
        recordingBytes: Int64 = 2 << 30, sessionBytes: Int64 = 8 << 30, relayBytes: Int64 = 50 << 30, freeSpaceBytes: Int64 = 1 << 30
    ) {
        self.recordingBytes = recordingBytes
        self.sessionBytes = sessionBytes
        self.relayBytes = relayBytes
        self.freeSpaceBytes = freeSpaceBytes
    }

    /// What a new recording may write, given what the session's and the relay's archives already take, or the
    /// sentence to answer when it may write nothing.
    func allowance(sessionUsed: Int64, relayUsed: Int64, freeSpace: Int64?) -> Result<Int64, ArchiveLimitError> {
        if let freeSpace, freeSpace < freeSpaceBytes {
            return .failure(.init("the disk has \(freeSpace >> 20) MiB free, under the \(freeSpaceBytes >> 20) MiB recordings leave free (archive-free-space): delete archives or free space"))
        }
        guard sessionUsed < sessionBytes else {
            return .failure(.init("this session's archives take \(sessionUsed >> 20) MiB, its quota (archive-session-quota) is \(sessionBytes >> 20) MiB: delete some first"))
        }
        guard relayUsed < relayBytes else {
            return .failure(.init("the relay's archives take \(relayUsed >> 20) MiB, its quota (archive-quota) is \(relayBytes >> 20) MiB: delete some first"))
        }
        return .success(min(recordingBytes, sessionBytes - sessionUsed, relayBytes - relayUsed))
    }

    /// Free bytes on the disk that holds `path`, for an unprivileged writer; nil when it cannot be told.
    static func freeSpace(at path: String) -> Int64? {
        var stats = statvfs()
        guard statvfs(path, &stats) == 0 else { return nil }
        let (free, overflow) = Int64(stats.f_bavail).multipliedReportingOverflow(by: Int64(stats.f_frsize))
        return overflow ? .max : free
    }
}

/// Why a recording may not start, or had to stop: a sentence for the caller.
public struct ArchiveLimitError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
