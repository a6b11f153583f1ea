public import Foundation
import ScreenService

/// The control socket's client side: what `screenpub status|pause|resume|stop` send to a running share.
public enum ShareControlClient {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// No screenpub answers at the socket.
        public let isNotRunning: Bool
        public let description: String
        /// What the control command exits with: 3 when no screenpub is running, 1 when it refused.
        public var exitStatus: Int32 { isNotRunning ? ExitStatus.notRunning : ExitStatus.runtimeFailure }
    }

    /// The control socket a command asks: `given`, else the default (nil without `$XDG_RUNTIME_DIR`).
    public static func socketPath(_ given: String?) -> String? {
        given ?? ControlSocket.defaultPath(application: "screenpub", environment: ProcessInfo.processInfo.environment)
    }

    /// Sends `command` to the screenpub whose control socket is `path` (nil: the default, ``socketPath(_:)``).
    public static func send(_ command: String, toSocket path: String?) async throws(Failure) -> (status: ShareStatus, json: Data) {
        guard let path = socketPath(path) else {
            // Without a runtime directory no screenpub of this user can have made its socket: as "not running".
            throw Failure(
                isNotRunning: true,
                description: "no screenpub is running here: $XDG_RUNTIME_DIR is not set, so there is no control socket to ask (give --control-socket PATH for a share started with one)")
        }
        return try await send(command, to: path)
    }

    /// Sends `command` and returns the decoded reply and its JSON; throws when no screenpub answers, when it
    /// answers something else than a status, or when it refuses.
    public static func send(_ command: String, to path: String) async throws(Failure) -> (status: ShareStatus, json: Data) {
        let json: Data
        do {
            json = try await ControlSocket.send(command, to: path)
        } catch {
            throw Failure(isNotRunning: true, description: "\(error)")
        }
        guard let status = try? JSONDecoder().decode(ShareStatus.self, from: json) else {
            throw Failure(isNotRunning: false, description: "the control socket answered something else than a status")
        }
        guard status.ok else { throw Failure(isNotRunning: false, description: status.error ?? "refused") }
        return (status, json)
    }
}
