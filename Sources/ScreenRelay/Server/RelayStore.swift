import Foundation
import ScreenTransport
import GRDB
import ScreenMedia

/// An archive's row in the index (GRDB stays an implementation detail of the store).
private struct ArchiveRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "archive"
    var archive: Archive
    init(_ archive: Archive) { self.archive = archive }
    init(from decoder: any Decoder) throws { archive = try Archive(from: decoder) }
    func encode(to encoder: any Encoder) throws { try archive.encode(to: encoder) }
}

/// The relay's memory across restarts: its sessions and the archive index, in an embedded SQLite database
/// (GRDB) in the relay's data directory, the archives' WebM (or Matroska) files beside it in `archives/`. Survives restarts; ``recoverInterrupted(now:)`` marks recordings that a dead
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
        migrator.registerMigration("session titles v1") { db in
            try db.alter(table: "session") { table in table.add(column: "title", .text).notNull().defaults(to: "") }
        }
        try migrator.migrate(database)
    }

    deinit { close(lockDescriptor) }

    /// The directory holding an archive's files.
    func folder(of id: String) -> URL { directory.appendingPathComponent(id, isDirectory: true) }

    /// The name of one stream's file in an archive's folder: `stream-N.webm`, or `stream-N.mkv` for H.264.
    static func fileName(stream: UInt32, container: RecordingContainer) -> String { "stream-\(stream).\(container.fileExtension)" }

    /// The files of an archive, in stream order.
    func files(of id: String) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder(of: id).path)) ?? []
        let streams = names.compactMap { name -> (stream: UInt32, name: String)? in
            let parts = name.split(separator: ".")
            guard parts.count == 2, parts[0].hasPrefix("stream-"), let stream = UInt32(parts[0].dropFirst(7)),
                let container = RecordingContainer.allCases.first(where: { $0.fileExtension == parts[1] }),
                Self.fileName(stream: stream, container: container) == name
            else { return nil }
            return (stream, name)
        }
        return streams.sorted { $0.stream < $1.stream }.map { folder(of: id).appendingPathComponent($0.name) }
    }

    /// Bytes on disk of `files` together (a missing file counts 0).
    static func size(of files: [URL]) -> Int {
        files.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: $1.path)[.size] as? Int) ?? 0) }
    }

    func insert(_ archive: Archive) throws { try database.write { try ArchiveRecord(archive).insert($0) } }
    func update(_ archive: Archive) throws { try database.write { try ArchiveRecord(archive).update($0) } }
    func archive(_ id: String) throws -> Archive? { try database.read { try ArchiveRecord.fetchOne($0, key: id)?.archive } }

    func list(sessionId: String?) throws -> [Archive] {
        try database.read { db in
            var request = ArchiveRecord.order(Column("createdAt").desc)
            if let sessionId { request = request.filter(Column("sessionId") == sessionId) }
            return try request.fetchAll(db).map(\.archive)
        }
    }

    /// Deletes the record and its files.
    func delete(_ id: String) throws {
        _ = try database.write { try ArchiveRecord.deleteOne($0, key: id) }
        try? FileManager.default.removeItem(at: folder(of: id))
    }

    // MARK: Sessions

    /// Remembers a session, so that a restarted relay still knows it (its tokens stay good).
    func saveSession(_ id: String, title: String, createdAt: Date) throws {
        try database.write {
            try $0.execute(sql: "INSERT OR REPLACE INTO session (id, title, createdAt) VALUES (?, ?, ?)", arguments: [id, title, createdAt])
        }
    }

    /// Forgets sessions (they expired, empty).
    func deleteSessions(_ ids: [String]) throws {
        try database.write { db in
            for id in ids { try db.execute(sql: "DELETE FROM session WHERE id = ?", arguments: [id]) }
        }
    }

    /// Sessions created after `date` (older ones have no valid token left: tokens live 30 days at most);
    /// older ones are forgotten.
    func sessions(createdAfter date: Date) throws -> [(id: String, title: String, createdAt: Date)] {
        try database.write { db in
            try db.execute(sql: "DELETE FROM session WHERE createdAt <= ?", arguments: [date])
            return try Row.fetchAll(db, sql: "SELECT id, title, createdAt FROM session ORDER BY createdAt").map { row in
                (row["id"], row["title"], row["createdAt"])
            }
        }
    }

    /// Recordings still `started` belong to a relay that died: they become `stopped`, with what is on disk.
    @discardableResult
    func recoverInterrupted() throws -> [Archive] {
        let interrupted = try database.read { try ArchiveRecord.filter(Column("status") == Archive.Status.started.rawValue).fetchAll($0).map(\.archive) }
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
