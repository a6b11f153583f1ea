import Logging

/// How the commands write their logs to standard error: readable lines (what journald shows as they are;
/// never coloured) or one JSON object per line for log collectors.
public enum LogFormat: String, Sendable, CaseIterable {
    case text
    case json

    /// Routes every logger of the process to standard error in this format. Call once, before logging.
    public func bootstrap() {
        switch self {
        case .text: LoggingSystem.bootstrap(StreamLogHandler.standardError)
        case .json: LoggingSystem.bootstrap { JSONLogHandler(label: $0) }
        }
    }
}

