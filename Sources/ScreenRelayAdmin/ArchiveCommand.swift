public import ArgumentParser
import ScreenTransportClient

/// `screenrelay archive start|stop|list|download|delete`: recordings and their archives.
public struct ArchiveCommand: AsyncParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "archive",
        abstract: "Record sessions, and list, download or delete their archives.",
        subcommands: [
            StartArchiveCommand.self, StopArchiveCommand.self, ListArchivesCommand.self, DownloadArchiveCommand.self,
            DeleteArchiveCommand.self,
        ])
}

struct StartArchiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start", abstract: "Start recording a session (its streams, with their frame metadata).",
        discussion: "Example:\n  screenrelay archive start 3f0c… --name \"Friday demo\"")

    @OptionGroup var options: AdminOptions
    @Argument(help: "The session to record.") var session: String
    @Option(help: "A name for the archive (its download is called NAME-0.webm).") var name: String?

    func run() async throws {
        let client = try options.client()
        let archive = try await options.call { () async throws(SessionAPIError) in try await client.startArchive(session: session, name: name) }
        options.print(RelayAdminOutput.archive(archive), json: archive)
    }
}

struct StopArchiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop", abstract: "Stop a recording; its file is complete when this returns.",
        discussion: "Example:\n  screenrelay archive stop 9b21…")

    @OptionGroup var options: AdminOptions
    @Argument(help: "The archive's id (screenrelay archive list).") var archive: String

    func run() async throws {
        let client = try options.client()
        let stopped = try await options.call { () async throws(SessionAPIError) in try await client.stopArchive(archive) }
        options.print(RelayAdminOutput.archive(stopped), json: stopped)
    }
}

struct ListArchivesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List archives, newest first; recordings in progress show their size and length so far.",
        discussion: "Examples:\n  screenrelay archive list\n  screenrelay archive list 3f0c… --json")

    @OptionGroup var options: AdminOptions
    @Argument(help: "Only this session's archives.") var session: String?

    func run() async throws {
        let client = try options.client()
        let archives = try await options.call { () async throws(SessionAPIError) in try await client.archives(session: session) }
        options.print(RelayAdminOutput.archives(archives), json: archives)
    }
}

struct DownloadArchiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "download", abstract: "Download an archive's WebM, or Matroska for H.264 (with its timed metadata track).",
        discussion: "Example:\n  screenrelay archive download 9b21… --output demo.webm")

    @OptionGroup var options: AdminOptions
    @Argument(help: "The archive's id.") var archive: String
    @Option(name: .shortAndLong, help: "Where to write it (default: ARCHIVE-STREAM.webm in the current directory; .mkv for H.264, a .webm name too).") var output: String?
    @Option(help: "Which of its streams, from 0.") var stream = 0

    func run() async throws {
        let client = try options.client()
        let (path, size) = try await options.call { () async throws(SessionAPIError) in
            if let output { try await client.downloadArchive(archive, stream: stream, to: output) } else {
                try await client.downloadArchive(archive, stream: stream, named: "\(archive)-\(stream)")
            }
        }
        struct Downloaded: Encodable { var path: String; var bytes: Int }
        options.print("wrote \(path) (\(size) bytes)", json: Downloaded(path: path, bytes: size))
    }
}

struct DeleteArchiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete an archive and its files (a recording in progress is stopped first).",
        discussion: "Example:\n  screenrelay archive delete 9b21…")

    @OptionGroup var options: AdminOptions
    @Argument(help: "The archive's id.") var archive: String

    func run() async throws {
        let client = try options.client()
        try await options.call { () async throws(SessionAPIError) in try await client.deleteArchive(archive) }
        struct Deleted: Encodable { var deleted: String }
        options.print("deleted archive \(archive)", json: Deleted(deleted: archive))
    }
}
