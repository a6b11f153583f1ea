import Foundation

/// A C program or library of `Tests/Fixtures`, compiled by the tests themselves with the machine's C compiler
/// (cc, clang or gcc), once per test process.
enum CompiledFixture {
    /// Compiles `sources` (file names in `Tests/Fixtures`) into `name` in a directory of this process; `shared`
    /// makes a library to preload. Returns its path; throws a ``HeadlessDesktopFailure`` that cannot start when no
    /// compiler builds it.
    static func build(_ name: String, sources: [String], libraries: [String] = [], shared: Bool = false) async throws -> String {
        try await MadeOnce.file(name, in: "screenpub-fixtures") { partial in
            let flags = (shared ? ["-shared", "-fPIC"] : []) + ["-O2", "-o", partial] + sources.map { TestFixtures.directory + "/" + $0 }
                + libraries.map { "-l" + $0 }
            var reasons: [String] = []
            for compiler in ["cc", "clang", "gcc"] {
                let outcome = try await ChildProcess.run("/usr/bin/env", [compiler] + flags)
                if outcome.status == 0 { return }
                reasons.append("\(compiler): \(outcome.standardError.suffix(200))")
            }
            throw HeadlessDesktopFailure(description: "no C compiler built the test fixture \(name): \(reasons.joined(separator: "; "))", cannotStart: true)
        }
    }
}
