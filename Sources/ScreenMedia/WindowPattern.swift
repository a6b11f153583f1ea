import Glibc

/// A shell-style glob (`*`, `?`, `[…]`), matched ignoring case against the whole text.
public struct WindowPattern: Sendable, Hashable, CustomStringConvertible {
    public let text: String
    private let folded: String

    /// Refuses an empty pattern, one that could never match (an unclosed `[`), and one that matches everything
    /// (which would hide the whole screen: use a region for that).
    public init(_ text: String) throws(PrivacyMaskError) {
        let trimmed = String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        guard !trimmed.isEmpty else { throw PrivacyMaskError("a window pattern is empty") }
        guard trimmed.contains(where: { $0 != "*" }) else {
            throw PrivacyMaskError("window pattern \"\(text)\" would match every window; use --mask-region to hide an area")
        }
        var depth = 0
        for character in trimmed {
            if character == "[" { depth += 1 } else if character == "]" { depth = max(0, depth - 1) }
        }
        guard depth == 0 else { throw PrivacyMaskError("window pattern \"\(text)\" has a \"[\" that is not closed") }
        self.text = trimmed
        folded = trimmed.lowercased()
    }

    public func matches(_ candidate: String) -> Bool {
        fnmatch(folded, candidate.lowercased(), 0) == 0
    }

    public var description: String { text }
}
