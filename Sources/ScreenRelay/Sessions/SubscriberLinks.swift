import NIOCore
import ScreenTransport

/// A session's view of its subscribers' sockets: read together, a loop at a time (``sample(_:)``), and paced as
/// the router says, each told again only when its rate moved by a tenth (``changes(for:rate:)``).
struct SubscriberLinks {
    /// The rate each paced socket was last set to, by connection.
    private var pacing: [String: Double] = [:]
    /// What each connection's socket showed at its last rate reading.
    private var lastReading: [String: (acknowledged: UInt64, pending: Int, at: Double)] = [:]
    /// A reading this soon after the last one measures nothing (the acknowledgements of a round trip or two).
    static var shortestReadingInterval: Double { 0.2 }

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

    /// The rate connection `id`'s link showed since its last reading, given its socket's `sample` at `now`, or nil:
    /// - the kernel's own measure, when the peer acknowledged anything since: the kernel keeps the rate it last
    ///   measured while nothing is delivered, and the same figure read again is not a new measure (read every half
    ///   second between two frames, a frame's last, low measure counted four times);
    /// - else, when the kernel calls its measure app-limited — as it does for seconds after a link narrowed under a
    ///   stream that had been lighter than the link — the bytes its peer acknowledged since, over the time, if the
    ///   kernel held more than those all along (the link was never short of data, so what it carried is its rate),
    ///   and the socket's pacing is not what held it: unpaced, or under ``pacingBound`` of the pacing (a socket
    ///   that carried about its pacing measures the pacing; taken as the link's, a stall's low reading lowered the
    ///   pacing, which the next readings then measured, down to a third of the link).
    mutating func rate(of id: String, _ sample: LinkSample, now: Double) -> Double? {
        let last = lastReading[id]
        lastReading[id] = (sample.acknowledgedBytes, sample.pendingBytes, now)
        guard let last, sample.acknowledgedBytes > last.acknowledged else { return nil }
        if let measured = sample.deliveryBytesPerSecond { return measured }
        let acknowledged = sample.acknowledgedBytes - last.acknowledged
        let seconds = now - last.at
        guard seconds >= Self.shortestReadingInterval, UInt64(max(0, last.pending)) > acknowledged else { return nil }
        let carried = Double(acknowledged) / seconds
        if let paced = pacing[id], carried >= Self.pacingBound * paced { return nil }
        return carried
    }

    /// A socket that carried less than this share of its pacing rate while busy was held by its link, not its
    /// pacing (headers and the pacing's own granularity take a few percent).
    static var pacingBound: Double { 0.6 }

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
    mutating func forget(_ id: String) {
        pacing[id] = nil
        lastReading[id] = nil
    }
}
