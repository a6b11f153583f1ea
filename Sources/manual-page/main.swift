import Foundation
import ScreenService

// `manual-page BINARY [--date YYYY-MM-DD]`: the man page of one of screenpub's commands, from what the
// command says about itself (`BINARY --experimental-dump-help`, `BINARY --version`), on standard output.
// packaging/deb/build.sh runs it for each command.

func run(_ binary: String, _ argument: String) -> Data? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = [argument]
    let pipe = Pipe()
    process.standardOutput = pipe
    do { try process.run() } catch { return nil }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return process.terminationStatus == 0 ? data : nil
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let binary = arguments.first else {
    FileHandle.standardError.write(Data("usage: manual-page BINARY [--date YYYY-MM-DD]\n".utf8))
    exit(64)
}
let date = arguments.firstIndex(of: "--date").flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
    ?? ISO8601DateFormatter().string(from: Date()).prefix(10).description
guard let dump = run(binary, "--experimental-dump-help"), let versionData = run(binary, "--version") else {
    FileHandle.standardError.write(Data("manual-page: \(binary) did not describe itself (--experimental-dump-help, --version)\n".utf8))
    exit(1)
}
let version = String(decoding: versionData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
do {
    print(try ManualPage(dump: dump, date: date, version: version).render(), terminator: "")
} catch {
    FileHandle.standardError.write(Data("manual-page: \(binary)'s --experimental-dump-help is not what this tool reads: \(error)\n".utf8))
    exit(1)
}
