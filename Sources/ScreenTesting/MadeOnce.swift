import Foundation

/// Files the tests make for themselves (a compiled fixture, a program's copy), once per test process.
enum MadeOnce {
    /// The path of `name` in this process's `directory` (under the temporary directory, suffixed with the process
    /// id). Unless it is there already, `make` writes it to the partial path it is given, which is then renamed
    /// into place: tests making it at once each get a whole file.
    static func file(_ name: String, in directory: String, make: (_ partial: String) async throws -> Void) async throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(directory)-\(getpid())").path
        let product = directory + "/" + name
        if FileManager.default.fileExists(atPath: product) { return product }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let partial = product + ".\(UUID().uuidString.prefix(8))"
        try await make(partial)
        guard rename(partial, product) == 0 else {
            throw HeadlessDesktopFailure(description: "cannot put \(product) in place: \(String(cString: strerror(errno)))", cannotStart: true)
        }
        return product
    }
}
