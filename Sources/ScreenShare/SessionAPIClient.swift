import Foundation
public import ScreenWire
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The relay's session API as a client: `POST /session` with the relay secret (`$SCREENRELAY_SECRET` in the
/// environment it is given) makes a session and answers its credentials.
public struct SessionAPIClient: Sendable {
    /// `http(s)://host:port`, without a trailing slash.
    public let server: String
    let secret: String?

    public init(server: String, environment: [String: String]) {
        self.server = server.hasSuffix("/") ? String(server.dropLast()) : server
        secret = environment["SCREENRELAY_SECRET"].flatMap { $0.isEmpty ? nil : $0 }
    }

    public func createSession() async throws(ShareError) -> SessionCredentials {
        guard let secret else {
            throw ShareError(.cannotStart, "--server needs --token, or the relay secret in $SCREENRELAY_SECRET to make a session")
        }
        guard let url = URL(string: server + "/session") else { throw ShareError(.cannotStart, "\(server) is not a URL") }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("Bearer \(secret)", forHTTPHeaderField: "Authorization")
        let data: Data, response: URLResponse
        do {
            (data, response) = try await URLSession.shared.data(for: request)
        } catch {
            throw ShareError(.cannotStart, "cannot reach the relay at \(server): \(error.localizedDescription)")
        }
        guard (response as? HTTPURLResponse)?.statusCode == 200, let session = try? JSONDecoder().decode(SessionCredentials.self, from: data) else {
            throw ShareError(.cannotStart, "the relay at \(server) did not create a session: \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
        return session
    }
}
