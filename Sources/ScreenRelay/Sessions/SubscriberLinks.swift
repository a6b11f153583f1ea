import NIOCore
import ScreenTransport

/// A session's view of its subscribers' sockets: read together, a loop at a time (``sample(_:)``), and paced as
/// the router says, each told again only when its rate moved by a tenth (``changes(for:rate:)``).
struct SubscriberLinks {
    /// The rate each paced socket was last set to, by connection.
    private var pacing: [String: Double] = [:]

    /// What the kernel knows of each socket, read where it lives: one visit to each event loop reads all of its
    /// sockets there, one `getsockopt` each (no task or hop a socket). Those that could not say are left out.
    static func sample(_ sources: [(id: String, link: LinkControl)]) async -> [(id: String, sample: LinkSample)] {
        var byLoop: [ObjectIdentifier: [(id: String, link: LinkControl)]] = [:]
        for source in sources { byLoop[ObjectIdentifier(source.link.eventLoop), default: []].append(source) }
        var collected: [(id: String, sample: LinkSample)] = []
        for links in byLoop.values {
            guard let loop = links.first?.link.eventLoop else { continue }
            let read = try? await loop.submit { links.compactMap { id, link in link.sampleOnLoop().map { (id, $0) } } }.get()
            collected += read ?? []
        }
        return collected
    }

    /// The sockets of `ids` to set a new pacing rate on (nil: unpaced), given the rate each should have now; noted
    /// as set.
    mutating func changes(for ids: [String], rate: (String) -> Double?) -> [(id: String, rate: Double?)] {
        var changes: [(id: String, rate: Double?)] = []
        for id in ids {
            let wanted = rate(id)
            switch (wanted, pacing[id]) {
            case (nil, nil): continue
            case (let wanted?, let applied?) where abs(wanted - applied) < 0.1 * applied: continue
            default: break
            }
            pacing[id] = wanted
            changes.append((id, wanted))
        }
        return changes
    }

    /// A connection left.
    mutating func forget(_ id: String) { pacing[id] = nil }
}
