import Foundation
import ScreenWire

/// `Link` header values of kind `rel="ice-server"` (RFC 9725 §4.6), as webrtcbin takes ICE servers.
enum WHIPLink {
    /// A server for the log: its credentials left out.
    static func redacted(_ server: String) -> String {
        guard let at = server.lastIndex(of: "@"), let scheme = server.range(of: "://") else { return server }
        return String(server[..<scheme.upperBound]) + "…@" + String(server[server.index(after: at)...])
    }

    static func iceServers(in header: String) -> [String] {
        header.split(separator: ",").compactMap { entry -> String? in
            let parts = entry.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let target = parts.first, target.hasPrefix("<"), target.hasSuffix(">") else { return nil }
            var parameters: [String: String] = [:]
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map(String.init)
                guard pair.count == 2 else { continue }
                parameters[pair[0].lowercased()] = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
            guard parameters["rel"] == "ice-server" else { return nil }
            let uri = String(target.dropFirst().dropLast())
            let address = uri.split(separator: ":", maxSplits: 1).last.map { String($0.split(separator: "?").first ?? "") } ?? ""
            if uri.hasPrefix("stun:") { return "stun://\(address)" }
            if uri.hasPrefix("turn:") || uri.hasPrefix("turns:") {
                let scheme = uri.hasPrefix("turns:") ? "turns" : "turn"
                let user = parameters["username"]?.percentEncodedComponent ?? ""
                let password = parameters["credential"]?.percentEncodedComponent ?? ""
                return "\(scheme)://\(user):\(password)@\(address)"
            }
            return nil
        }
    }
}

