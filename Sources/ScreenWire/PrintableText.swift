extension String {
    /// The text with control characters escaped (`\n`, `\t`, `\u{1b}`…), for log lines and terminals built
    /// from what a remote peer sent: a chat line cannot forge a log line or move a terminal's cursor.
    public var escapingControlCharacters: String {
        var escaped = ""
        escaped.reserveCapacity(utf8.count)
        for scalar in unicodeScalars {
            switch scalar {
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case "\\": escaped += "\\\\"
            // C0, DEL and C1 controls, and the bidirectional overrides that reorder what a reader sees.
            case "\u{0}"..."\u{1F}", "\u{7F}"..."\u{9F}", "\u{202A}"..."\u{202E}", "\u{2066}"..."\u{2069}":
                escaped += "\\u{\(String(scalar.value, radix: 16))}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
