import Foundation
import ScreenTransport
import Logging
import ScreenRecording
import ScreenWire

/// Starts and stops session recordings and keeps their index: the archive API's logic, apart from HTTP.
actor ArchiveManager {
    let store: RelayStore
    private let registry: SessionRegistry
    private let logger: Logger
    /// Recordings in progress: archive id → its session.
    private var active: [String: SessionHub] = [:]
    /// Archives whose final state the index could not take (a full disk): served from here, and written as soon
    /// as the index takes writes again.
    private var unsaved: [String: Archive] = [:]

    private let limits: ArchiveLimits
    private let metrics: RelayMetrics?

    init(store: RelayStore, registry: SessionRegistry, logger: Logger, limits: ArchiveLimits = .init(), metrics: RelayMetrics? = nil) throws {
        self.store = store
        self.limits = limits
        self.metrics = metrics
        self.registry = registry
        self.logger = logger
        for archive in try store.recoverInterrupted() {
            logger.warning("archive \(archive.id) of session \(archive.sessionId) was still recording when the relay stopped; marked stopped")
        }
    }

    func start(sessionId: String, name: String?) async throws -> Archive {
        guard let hub = await registry.hub(sessionId) else { throw RelayError(.notFound, "there is no session \(sessionId)") }
        guard await hub.recorder == nil else { throw RelayError(.conflict, "session \(sessionId) is already being recorded") }
        let name = name ?? ""
        guard name.count <= 200 else { throw RelayError(.badRequest, "an archive name may hold at most 200 characters") }
        let allowance = try allowance(for: sessionId)
        let id = SessionRegistry.newIdentifier()
        var archive = Archive(
            id: id, sessionId: sessionId, name: name, status: .started, reason: "", createdAt: Date(), duration: 0, size: 0,
            streams: 0, resolution: "", sha256: nil)
        do {
            try store.insert(archive)
        } catch {
            throw RelayError(.storage, "cannot write the archive index: \(error)")
        }
        let recorder: ArchiveRecorder
        do {
            recorder = try ArchiveRecorder(
                archiveId: id, folder: store.folder(of: id), allowance: allowance, freeSpaceFloor: limits.freeSpaceBytes,
                onLimit: { [weak self] reason in Task { await self?.limitReached(id, reason: reason) } },
                onFailure: { [weak self] reason in Task { await self?.recordingFailed(id, reason: reason) } })
        } catch {
            archive.status = .failed
            archive.reason = "\(error)"
            try? store.update(archive)
            logger.error("archive \(id) failed to start: \(error)")
            return archive
        }
        active[id] = hub
        await hub.attach(recorder, name: name) { [weak self] in
            _ = try? await self?.stop(id, reason: "the session had no stream for the grace period")
        }
        logger.info("archive \(id) of session \(sessionId) started")
        return archive
    }

    /// The archives (newest first), those being recorded with their length and size so far.
    func list(sessionId: String?) async throws -> [Archive] {
        saveUnsaved()
        var archives = try store.list(sessionId: sessionId).map { unsaved[$0.id] ?? $0 }
        for index in archives.indices where archives[index].status == .started { archives[index] = await withProgress(archives[index]) }
        return archives
    }

    /// One archive, with its length and size so far if it is being recorded.
    func archive(_ id: String) async throws -> Archive? {
        saveUnsaved()
        guard let archive = try unsaved[id] ?? store.archive(id) else { return nil }
        return archive.status == .started ? await withProgress(archive) : archive
    }

    private func withProgress(_ archive: Archive) async -> Archive {
        guard let hub = active[archive.id], let recorder = await hub.recorder, recorder.archiveId == archive.id else { return archive }
        let progress = await recorder.progress()
        var current = archive
        (current.duration, current.size, current.streams, current.resolution) = (progress.duration, progress.size, progress.streams, progress.resolution)
        return current
    }

    /// Stops a recording (or returns the archive as it is when it is not recording).
    func stop(_ id: String, reason: String = "") async throws -> Archive {
        guard var archive = try unsaved[id] ?? store.archive(id) else { throw RelayError(.notFound, "there is no archive \(id)") }
        guard let hub = active.removeValue(forKey: id), let recorder = await hub.recorder, recorder.archiveId == id else { return archive }
        let summary = await recorder.finish()
        archive.duration = summary.duration
        archive.streams = summary.streams
        archive.resolution = summary.resolution
        archive.size = summary.size
        archive.sha256 = summary.sha256
        if let failure = summary.failure {
            archive.status = .failed
            archive.reason = failure
        } else {
            archive.status = .available
            archive.reason = reason
        }
        // The session is free to record again and everyone is told, whether or not the index takes the write.
        await hub.detach(status: archive.status.rawValue, reason: archive.reason)
        save(archive)
        logger.info("archive \(id) \(archive.status.rawValue): \(archive.size) bytes, \(archive.duration) s")
        return archive
    }

    /// Writes an archive's final state to the index, or keeps it in ``unsaved`` until the index takes writes.
    private func save(_ archive: Archive) {
        do {
            try store.update(archive)
            unsaved[archive.id] = nil
        } catch {
            if unsaved[archive.id] == nil {
                logger.error("archive \(archive.id) is \(archive.status.rawValue), but the index could not be written (\(error)); it is kept in memory until it can")
            }
            unsaved[archive.id] = archive
        }
    }

    private func saveUnsaved() {
        for archive in unsaved.values.sorted(by: { $0.id < $1.id }) { save(archive) }
    }

    /// What a new recording of the session may write, within the quotas and the free-space floor.
    private func allowance(for sessionId: String) throws -> Int64 {
        let archives: [Archive]
        do { archives = try store.list(sessionId: nil) } catch { throw RelayError(.storage, "cannot read the archive index: \(error)") }
        let sizes = archives.map { unsaved[$0.id] ?? $0 }
        let relayUsed = sizes.reduce(Int64(0)) { $0 &+ Int64($1.size) }
        let sessionUsed = sizes.filter { $0.sessionId == sessionId }.reduce(Int64(0)) { $0 &+ Int64($1.size) }
        switch limits.allowance(sessionUsed: sessionUsed, relayUsed: relayUsed, freeSpace: ArchiveLimits.freeSpace(at: store.directory.deletingLastPathComponent().path)) {
        case .success(let bytes): return bytes
        case .failure(let refusal):
            metrics?.refused(.archiveQuota)
            throw RelayError(.quota, "cannot record: \(refusal.description)")
        }
    }

    /// A quota or the free-space floor reached while recording: the files are finished, the archive `available`.
    private func limitReached(_ id: String, reason: String) async {
        logger.notice("archive \(id) stops: \(reason)")
        metrics?.refused(.archiveQuota)
        _ = try? await stop(id, reason: reason)
    }

    /// A write error: the archive is failed with the reason at once; the session keeps being relayed.
    private func recordingFailed(_ id: String, reason: String) async {
        logger.error("archive \(id) failed: \(reason)")
        // The recorder keeps its failure: stopping finishes the files and makes the archive `failed` with it.
        _ = try? await stop(id, reason: reason)
    }

    /// Stops every recording (the relay is shutting down), so that their files are finished.
    func stopAll() async {
        for id in active.keys { _ = try? await stop(id, reason: "the relay shut down") }
    }
}
