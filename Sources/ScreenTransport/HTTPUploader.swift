public import Foundation

/// Sends one HTTP request with an optional body and answers the status: what the relay's HLS push needs of an
/// HTTP client. The client part's `RelayHTTPClient` is one; the relay server, which does not link the client
/// part, is given one by whoever starts it.
public protocol HTTPUploader: Sendable {
    func upload(_ method: String, _ url: String, body: (data: Data, contentType: String)?) async throws(RelayClientError) -> Int
}
