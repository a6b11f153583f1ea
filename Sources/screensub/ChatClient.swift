import ArgumentParser
import Foundation
import Logging
import ScreenMedia
import ScreenSession
import ScreenTransport
import ScreenTransportClient
import ScreenWire

/// `screensub --chat`: the session's text chat on a terminal or in a pipe.
struct ChatClient {
    let server: String
    let token: String
    let to: String?
    let json: Bool
    let trust: ClientTrust

    func run() async throws {
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
                        show(signal, json: json)
                        // Directed lines are not echoed; an echoed last line means everything went out.
                        if inputDone.value, to != nil || (signal.from == me && signal.data == lastSent.value) { return }
                    case .error(let code, let text):
                        let said = text.escapingControlCharacters
                        FileHandle.standardError.write(Data("screensub: the relay answered \(code.rawValue): \(said)\n".utf8))
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
            FileHandle.standardError.write(Data("screensub: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }

    private func show(_ signal: Signal, json: Bool) {
        let sender = signal.senderName
        if json {
            let object: [String: Any] = [
                "signalType": signal.type, "data": signal.data, "from": signal.from ?? NSNull(),
                "fromData": signal.fromData ?? "", "to": signal.to ?? NSNull(),
            ]
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
                emit(String(decoding: data, as: UTF8.self))
            }
        } else if signal.type == "chat" {
            // Escaped: a chat line cannot move the terminal's cursor or pass for another line.
            emit("<\(sender.escapingControlCharacters)> \(signal.data.escapingControlCharacters)")
        } else {
            emit("[\(signal.type) from \(sender.escapingControlCharacters)] \(signal.data.escapingControlCharacters)")
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
