import Foundation
import Logging
public import ScreenMedia
public import ScreenService
import ScreenSession
import ScreenTransport
public import ScreenTransportClient
public import ScreenWire

/// `screensub --chat`: the session's text chat on a terminal or in a pipe.
public struct ChatSession: Sendable {
    public let server: String
    public let token: String
    /// Send to this connection id only.
    public let to: String?
    public let json: Bool
    public let trust: ClientTrust

    public func run(output: JobOutput) async throws(CommandFailure) {
        let emit = output.line
        var logger = Logger(label: "screensub")
        logger.logLevel = .warning
        let lines = Self.standardInputLines()
        let (to, json) = (self.to, self.json)
        do {
            try await RelayClient.connect(
                transport: WebSocketTransport(url: RelayEndpoint.webSocketURL(server: server), trust: trust), token: token,
                client: "screensub/\(ScreenpubVersion.current)", logger: logger
            ) { link, events in
                guard case .welcome(let me, let sessionId, _, _, let connections, _)? = try await events.nextControl() else {
                    throw RelayClientError(.closed, "the relay did not welcome us")
                }
                if !json {
                    emit("chat in session \(sessionId) as \(me); \(connections.count) other connection(s). Type a line to send it.")
                }
                // Standard input is read on its own task; what it sends is echoed back by the relay (to everyone,
                // us included), which is how we know the last line went out before we exit.
                let lastSent = Locked<String?>(nil)
                let inputDone = Locked(false)
                let sender = Task {
                    for await line in lines where !line.isEmpty {
                        try await link.send(.signal(Signal(type: "chat", data: line, to: to)))
                        lastSent.withLock { $0 = line }
                    }
                    inputDone.withLock { $0 = true }
                    // Nothing to wait for: close now. Otherwise the echo of the last line ends the loop below;
                    // if it never comes, give up after 5 s.
                    if lastSent.value != nil, to == nil { try await Task.sleep(for: .seconds(5)) }
                    try await link.close()
                }
                defer { sender.cancel() }
                while let event = try await events.next() {
                    guard case .control(let message) = event else { continue }
                    switch message {
                    case .signal(let signal):
                        emit(Self.line(signal, json: json))
                        // Directed lines are not echoed; an echoed last line means everything went out.
                        if inputDone.value, to != nil || (signal.from == me && signal.data == lastSent.value) { return }
                    case .error(let code, let text):
                        let said = text.escapingControlCharacters
                        output.remark("the relay answered \(code.rawValue): \(said)")
                        if code != .invalidSignal && code != .notFound { throw RelayClientError(.refused(code), said) }
                    case .connectionCreated(let connection) where !json:
                        emit("* \((connection.data.isEmpty ? connection.connectionId : connection.data).escapingControlCharacters) joined")
                    case .connectionDestroyed(let id) where !json:
                        emit("* \(id) left")
                    default:
                        continue
                    }
                }
            }
        } catch {
            throw CommandFailure(ExitStatus.runtimeFailure, "\(error)")
        }
    }

    /// A signal as a line: `<name> text` for chat, `[type from name] data` for others (escaped: a chat line cannot
    /// move the terminal's cursor or pass for another line), or one JSON object.
    public static func line(_ signal: Signal, json: Bool) -> String {
        let sender = signal.senderName
        if json {
            let object: [String: Any] = [
                "signalType": signal.type, "data": signal.data, "from": signal.from ?? NSNull(),
                "fromData": signal.fromData ?? "", "to": signal.to ?? NSNull(),
            ]
            return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? ""
        } else if signal.type == "chat" {
            return "<\(sender.escapingControlCharacters)> \(signal.data.escapingControlCharacters)"
        } else {
            return "[\(signal.type) from \(sender.escapingControlCharacters)] \(signal.data.escapingControlCharacters)"
        }
    }

    /// Lines of standard input, read on a thread of their own (reading blocks).
    static func standardInputLines() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        let reader = Thread {
            while let line = readLine(strippingNewline: true) { continuation.yield(line) }
            continuation.finish()
        }
        reader.name = "screensub-stdin"
        reader.start()
        return stream
    }
}
