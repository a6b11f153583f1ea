public import Logging
import ScreenMedia
public import ScreenWire

/// Connects a client to a server in the same process through two bounded message pipes, one per direction:
/// the same protocol as over a socket, without a socket or WebSocket framing (screenpub's embedded relay
/// publishes through it). A full pipe makes its sender wait, exactly as a full socket would: a client that
/// stops reading holds back only its own writer, and the server's per-connection bounds do the rest.
public struct InProcessTransport: RelayTransport {
    /// Serves one connection until it ends: reads `inbound`, answers through `write`, ends it with `close`.
    public typealias Serve = @Sendable (
        _ inbound: RelayInbound, _ write: @escaping @Sendable (RelayMessage) async throws -> Void,
        _ close: @escaping @Sendable (WireErrorCode, String) async throws -> Void, _ logger: Logger
    ) async -> Void

    public let endpoint: String
    private let serve: Serve

    public init(endpoint: String, serve: @escaping Serve) {
        self.endpoint = endpoint
        self.serve = serve
    }

    /// Messages in flight per direction.
    static let pipeCapacity = 8

    public func open<Result: Sendable>(
        logger: Logger, _ body: @escaping @Sendable (RelayOutbound, RelayInbound) async throws -> Result
    ) async throws -> Result {
        let toServer = MessagePipe(capacity: Self.pipeCapacity)
        let toClient = MessagePipe(capacity: Self.pipeCapacity)
        return try await withThrowingTaskGroup(of: InProcessConnectionEnd<Result>.self) { group in
            group.addTask { [serve] in
                await serve(RelayInbound { await toServer.receive() }, { try await toClient.send($0) }, { _, _ in toClient.close() }, logger)
                // The server has let the connection go: whatever the client still sends goes nowhere.
                toServer.close()
                toClient.close()
                return .server
            }
            group.addTask {
                defer {
                    toServer.close()
                    toClient.close()
                }
                return .client(try await body(
                    RelayOutbound(send: { try await toServer.send($0) }, close: { toServer.close() }),
                    RelayInbound { await toClient.receive() }))
            }
            while let finished = try await group.next() {
                if case .client(let result) = finished { return result }
            }
            throw RelayClientError(.closed, "the in-process relay connection ended without a result")
        }
    }
}

/// Which side of an in-process connection finished first.
enum InProcessConnectionEnd<Result: Sendable>: Sendable {
    case server
    case client(Result)
}

/// A bounded, single-consumer queue of messages between two tasks. `send` waits while it is full;
/// `receive` waits while it is empty and returns nil once it is closed and drained. Closing wakes everyone;
/// a send after close throws. Cancelling a waiting task closes the pipe (its connection is over).
final class MessagePipe: Sendable {
    private struct State {
        var buffer: [RelayMessage] = []
        var head = 0
        var closed = false
        var receiver: CheckedContinuation<RelayMessage?, Never>?
        var senders: [CheckedContinuation<Void, any Error>] = []
        var count: Int { buffer.count - head }
    }

    private let capacity: Int
    private let state = Locked(State())

    init(capacity: Int) { self.capacity = capacity }

    func send(_ message: RelayMessage) async throws {
        while true {
            let outcome: Result<Bool, RelayClientError> = state.withLock { state in
                if state.closed { return .failure(RelayClientError(.closed, "the in-process relay connection is closed")) }
                guard state.count < capacity else { return .success(false) }
                if let receiver = state.receiver {
                    state.receiver = nil
                    receiver.resume(returning: message)
                } else {
                    state.buffer.append(message)
                }
                return .success(true)
            }
            if try outcome.get() { return }
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let ready = state.withLock { state -> Bool in
                        if state.closed || state.count < capacity { return true }
                        state.senders.append(continuation)
                        return false
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                close()
            }
        }
    }

    func receive() async -> RelayMessage? {
        let immediate: RelayMessage?? = state.withLock { state in
            if state.count > 0 { return .some(takeFirst(&state)) }
            return state.closed ? .some(nil) : nil
        }
        if let immediate { return immediate }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<RelayMessage?, Never>) in
                let ready: RelayMessage?? = state.withLock { state in
                    if state.count > 0 { return .some(takeFirst(&state)) }
                    if state.closed { return .some(nil) }
                    state.receiver = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            close()
        }
    }

    func close() {
        let (receiver, senders) = state.withLock { state in
            state.closed = true
            defer {
                state.receiver = nil
                state.senders = []
            }
            return (state.receiver, state.senders)
        }
        receiver?.resume(returning: nil)
        for sender in senders { sender.resume() }
    }

    /// Removes the oldest message and lets one waiting sender try again.
    private func takeFirst(_ state: inout State) -> RelayMessage {
        let message = state.buffer[state.head]
        state.head += 1
        if state.head > 64, state.head * 2 > state.buffer.count {
            state.buffer.removeFirst(state.head)
            state.head = 0
        }
        if !state.senders.isEmpty { state.senders.removeFirst().resume() }
        return message
    }
}
