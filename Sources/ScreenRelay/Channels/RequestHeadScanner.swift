/// Follows one HTTP/1.1 request head as its bytes arrive, keeping none of them: where the head ends (its empty
/// line) and whether its request line or its header fields have grown past their limits. nginx's bounds are the
/// defaults (`large_client_header_buffers 4 8k`): a request line of at most 8 KiB, header fields of at most
/// 32 KiB in all.
///
/// Lines end with LF, a CR before it being part of the line end (HTTP/1.1 says CRLF; a lone LF is taken too, so
/// that the scanner never sees a head end later than the decoder does). Empty lines before the request line are
/// skipped, as RFC 9112 §2.2 lets a server do, but count towards the request line's limit.
struct RequestHeadScanner: Sendable, Equatable {
    struct Limits: Sendable, Equatable {
        /// Bytes of the request line, its line end not counted (past it: 414).
        var requestLine: Int
        /// Bytes of the header fields together, each line end and the closing empty line counted (past it: 431).
        var headerFields: Int

        /// nginx's: 8 KiB and 32 KiB.
        static let standard = Limits(requestLine: 8 << 10, headerFields: 32 << 10)
    }

    enum Part: Sendable, Equatable {
        case requestLine, headerFields
    }

    enum Outcome: Sendable, Equatable {
        /// Every byte so far belongs to the head, which goes on.
        case unfinished
        /// The head ends after this many of the bytes scanned last (its empty line included); the rest are not
        /// the head's (a body, or the next request).
        case ended(after: Int)
        /// This part of the head is longer than its limit: the request is refused. No more bytes may be scanned.
        case tooLong(Part)
    }

    let limits: Limits
    /// Whether the request line has ended.
    private(set) var inHeaderFields = false
    /// Bytes of the current line so far (a CR that may be its line end included); before the request line, the
    /// empty lines skipped too.
    private var line = 0
    /// Whether the last byte was a CR.
    private var afterCR = false
    /// Whether a byte of the request line itself (not of an empty line before it) has come.
    private var sawRequestLine = false
    /// Bytes of the header fields so far.
    private(set) var headerFieldBytes = 0
    private(set) var outcome = Outcome.unfinished

    init(limits: Limits) {
        self.limits = limits
    }

    /// Scans the next bytes of the head. Once it has ended or been refused, the outcome stays as it is.
    mutating func scan<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> Outcome {
        guard outcome == .unfinished else { return outcome }
        var index = 0
        for byte in bytes {
            index += 1
            if inHeaderFields {
                headerFieldBytes += 1
                if headerFieldBytes > limits.headerFields {
                    outcome = .tooLong(.headerFields)
                    return outcome
                }
                if byte == 10 {
                    if line == 0 || (line == 1 && afterCR) {
                        outcome = .ended(after: index)
                        return outcome
                    }
                    line = 0
                } else {
                    line += 1
                }
            } else if byte == 10 {
                if sawRequestLine {
                    inHeaderFields = true
                    line = 0
                } else {
                    // An empty line before the request line: skipped, its bytes counted in `line`.
                    line += 1
                    if line > limits.requestLine + 1 {
                        outcome = .tooLong(.requestLine)
                        return outcome
                    }
                }
            } else {
                line += 1
                if byte != 13 { sawRequestLine = true }
                // The line may still end with CR LF, whose CR is not the line's.
                if line > limits.requestLine + 1 || (line == limits.requestLine + 1 && byte != 13) {
                    outcome = .tooLong(.requestLine)
                    return outcome
                }
            }
            afterCR = byte == 13
        }
        return outcome
    }
}
