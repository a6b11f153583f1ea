import Hummingbird
import NIOCore

extension Request {
    /// What `Authorization: Bearer …` presents; nil without that header in that form.
    var bearerToken: String? {
        guard let header = headers[.authorization], header.hasPrefix("Bearer ") else { return nil }
        return String(header.dropFirst(7))
    }

    /// The token in the URL's query (`?token=`), for pages and players that cannot set headers.
    var queryToken: String? { uri.queryParameters["token"].map(String.init) }

    /// Whether this request comes from a loopback address and no proxy forwarded it (no `Forwarded` or
    /// `X-Forwarded-For`).
    func isLocalAndDirect(channel: any Channel) -> Bool {
        guard headers[.forwarded] == nil, headers[.xForwardedFor] == nil, let address = channel.remoteAddress?.ipAddress else { return false }
        return ReachableAddress.isLoopback(address)
    }
}
