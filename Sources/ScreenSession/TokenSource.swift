import Foundation

/// Where a command takes its token from. A token on the command line (`--token`) is shown to every user of the
/// machine by `ps`, so a file (`--token-file`, readable by its owner only) or an environment variable come first.
public enum TokenSource {
    /// The longest token file read (a relay's tokens are well under 2 KB).
    public static let maximumFileBytes = 16 << 10

    /// The token from exactly one of `option`, `file` (its first line, whitespace trimmed) or `environment[variable]`;
    /// nil when none is given. Throws a sentence a user can act on when more than one is given, or the file cannot
    /// be read or is empty.
    public static func resolve(
        option: String?, file: String?, environment: [String: String], variable: String
    ) throws(TokenSourceError) -> String? {
        let fromEnvironment = environment[variable].flatMap { $0.isEmpty ? nil : $0 }
        let given = [option != nil, file != nil, fromEnvironment != nil].count { $0 }
        guard given <= 1 else {
            throw TokenSourceError("give the token one way only: --token-file, $\(variable) or --token")
        }
        if let option { return option }
        if let fromEnvironment { return fromEnvironment.trimmingCharacters(in: .whitespacesAndNewlines) }
        guard let file else { return nil }
        guard let handle = FileHandle(forReadingAtPath: file) else {
            throw TokenSourceError("cannot read the token file \(file): check that it exists and that you may read it")
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: maximumFileBytes + 1)) ?? Data()
        guard data.count <= maximumFileBytes else {
            throw TokenSourceError("the token file \(file) is over \(maximumFileBytes / 1024) KB: it should hold one token")
        }
        let token = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard !token.isEmpty else { throw TokenSourceError("the token file \(file) is empty: put the token on its first line") }
        return token
    }
}

/// A token that could not be had, with the sentence that says why.
public struct TokenSourceError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
