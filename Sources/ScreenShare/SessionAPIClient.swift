import Foundation
public import ScreenTransport
public import ScreenWire

/// The relay's session API as a client: `POST /session` with the relay secret (`$SCREENRELAY_SECRET` in the
/// environment it is given) makes a session and answers its credentials.
public struct SessionAPIClient: Sendable {
    /// `http(s)://host:port`, without a trailing slash.
    public let server: String
    let secret: String?
    let http: RelayHTTPClient

    public init(server: String, environment: [String: String], trust: ClientTrust = .system) {
        self.server = server.hasSuffix("/") ? String(server.dropLast()) : server
        secret = environment["SCREENRELAY_SECRET"].flatMap { $0.isEmpty ? nil : $0 }
        http = RelayHTTPClient(trust: trust)
    }

    public func createSession() async throws(ShareError) -> SessionCredentials {
        guard let secret else {
            throw ShareError(.cannotStart, "--server needs --token, or the relay secret in $SCREENRELAY_SECRET to make a session")
        }
        let response: RelayHTTPClient.Response
        do {
            response = try await http.send("POST", server + "/session", bearer: secret)
        } catch {
            throw ShareError(.cannotStart, error.message)
        }
        guard response.status == 200, let session = try? JSONDecoder().decode(SessionCredentials.self, from: response.body) else {
            let said = String(decoding: response.body.prefix(200), as: UTF8.self).escapingControlCharacters
            throw ShareError(.cannotStart, "the relay at \(server) did not create a session (HTTP \(response.status)): \(said)")
        }
        return session
    }
}
