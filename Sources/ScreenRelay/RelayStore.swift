import Foundation
import GRDB

/// One recording of a session, as `GET /archive/{id}` returns it.
struct Archive: Sendable, Hashable, Codable {
    enum Status: String, Sendable, Codable {
        /// Frames are being written.
        case started
        /// Recording ended without a finished file (the relay stopped mid-recording); what was written plays.
        case stopped
        /// Finished: the file is complete and its size and sha256 are known.
        case available
        /// Recording failed (a write error, a full disk); `reason` says why. Frames written before stay readable.
        case failed
    }

    var id: String
    var sessionId: String
    var name: String
    var status: Status
    var reason: String
    var createdAt: Date
    /// Seconds from the first to the last frame recorded.
    var duration: Double
    /// Bytes on disk (all streams).
    var size: Int
    /// Streams recorded (one WebM each).
    var streams: Int
    /// `WIDTHxHEIGHT` of the first stream, or empty before its first frame.
    var resolution: String
    /// Of the first stream's file, once available.
    var sha256: String?
}

extension Archive: FetchableRecord, PersistableRecord {
    static let databaseTableName = "archive"
}

/// The relay's memory across restarts: its sessions and the archive index, in an embedded SQLite database
/// (GRDB) in the relay's data directory, the archives' WebM files beside it in `archives/`. Survives restarts; ``recoverInterrupted(now:)`` marks recordings that a dead
/// relay left `started`.
final class RelayStore: Sendable {
    let directory: URL
    private let database: DatabaseQueue
    /// Held for the store's life: one relay per data directory (another would mark our recordings interrupted).
    private let lockDescriptor: Int32

    init(dataDirectory: String) throws {
        let root = URL(fileURLWithPath: dataDirectory, isDirectory: true)
        directory = root.appendingPathComponent("archives", isDirectory: true)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        lockDescriptor = open(root.appendingPathComponent("lock").path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lockDescriptor >= 0, flock(lockDescriptor, LOCK_EX | LOCK_NB) == 0 else {
            if lockDescriptor >= 0 { close(lockDescriptor) }
            throw RelayError(.dataDirectoryInUse, "another relay is using the data directory \(dataDirectory)")
        }
        do {
            database = try DatabaseQueue(path: root.appendingPathComponent("archives.sqlite").path)
        } catch {
            close(lockDescriptor)
            throw error
        }
        var migrator = DatabaseMigrator()
        migrator.registerMigration("archives v1") { db in
            try db.create(table: "archive") { table in
                table.primaryKey("id", .text)
                table.column("sessionId", .text).notNull().indexed()
                table.column("name", .text).notNull()
                table.column("status", .text).notNull()
                table.column("reason", .text).notNull()
                table.column("createdAt", .datetime).notNull()
                table.column("duration", .double).notNull()
                table.column("size", .integer).notNull()
                table.column("streams", .integer).notNull()
                table.column("resolution", .text).notNull()
                table.column("sha256", .text)
            }
        }
        migrator.registerMigration("sessions v1") { db in
            try db.create(table: "session") { table in
                table.primaryKey("id", .text)
                table.column("createdAt", .datetime).notNull()
            }
        }
        try migrator.migrate(database)
    }

    deinit { close(lockDescriptor) }

    /// The directory holding an archive's files.
    func folder(of id: String) -> URL { directory.appendingPathComponent(id, isDirectory: true) }

    /// The name of one stream's file in an archive's folder.
    static func fileName(stream: UInt32) -> String { "stream-\(stream).webm" }

    /// The files of an archive, in stream order.
    func files(of id: String) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder(of: id).path)) ?? []
        let streams = names.compactMap { name in
            UInt32(name.dropFirst(7).dropLast(5)).flatMap { Self.fileName(stream: $0) == name ? $0 : nil }
        }
        return streams.sorted().map { folder(of: id).appendingPathComponent(Self.fileName(stream: $0)) }
    }

    /// Bytes on disk of `files` together (a missing file counts 0).
    static func size(of files: [URL]) -> Int {
        files.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: $1.path)[.size] as? Int) ?? 0) }
    }

    func insert(_ archive: Archive) throws { try database.write { try archive.insert($0) } }
    func update(_ archive: Archive) throws { try database.write { try archive.update($0) } }
    func archive(_ id: String) throws -> Archive? { try database.read { try Archive.fetchOne($0, key: id) } }

    func list(sessionId: String?) throws -> [Archive] {
        try database.read { db in
            var request = Archive.order(Column("createdAt").desc)
            if let sessionId { request = request.filter(Column("sessionId") == sessionId) }
            return try request.fetchAll(db)
        }
    }

    /// Deletes the record and its files.
    func delete(_ id: String) throws {
        _ = try database.write { try Archive.deleteOne($0, key: id) }
        try? FileManager.default.removeItem(at: folder(of: id))
    }

    // MARK: Sessions

    /// Remembers a session, so that a restarted relay still knows it (its tokens stay good).
    func saveSession(_ id: String, createdAt: Date) throws {
        try database.write { try $0.execute(sql: "INSERT OR REPLACE INTO session (id, createdAt) VALUES (?, ?)", arguments: [id, createdAt]) }
    }

    /// Forgets sessions (they expired, empty).
    func deleteSessions(_ ids: [String]) throws {
        try database.write { db in
            for id in ids { try db.execute(sql: "DELETE FROM session WHERE id = ?", arguments: [id]) }
        }
    }

    /// Sessions created after `date` (older ones have no valid token left: tokens live 30 days at most);
    /// older ones are forgotten.
    func sessions(createdAfter date: Date) throws -> [String] {
        try database.write { db in
            try db.execute(sql: "DELETE FROM session WHERE createdAt <= ?", arguments: [date])
            return try String.fetchAll(db, sql: "SELECT id FROM session ORDER BY createdAt")
        }
    }

    /// Recordings still `started` belong to a relay that died: they become `stopped`, with what is on disk.
    @discardableResult
    func recoverInterrupted() throws -> [Archive] {
        let interrupted = try database.read { try Archive.filter(Column("status") == Archive.Status.started.rawValue).fetchAll($0) }
        var recovered: [Archive] = []
        for var archive in interrupted {
            archive.status = .stopped
            archive.reason = "the relay stopped while recording; the files play up to the last frame written"
            let files = files(of: archive.id)
            archive.size = Self.size(of: files)
            archive.streams = files.count
            try update(archive)
            recovered.append(archive)
        }
        return recovered
    }
}
