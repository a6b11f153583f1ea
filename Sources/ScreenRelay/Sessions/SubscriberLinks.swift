/// A session's view of its subscribers' sockets: read together (``sample(_:)``), and paced as the router says,
/// each told again only when its rate moved by a tenth (``changes(for:rate:)``).
struct SubscriberLinks {
    /// The rate each paced socket was last set to, by connection.
    private var pacing: [String: Double] = [:]

    /// What the kernel knows of each socket, read concurrently; those that could not say are left out.
    static func sample(_ sources: [(id: String, link: LinkControl)]) async -> [(id: String, sample: LinkSample)] {
        await withTaskGroup(of: (String, LinkSample?).self) { group in
            for (id, link) in sources { group.addTask { (id, await link.sample()) } }
            var collected: [(id: String, sample: LinkSample)] = []
            for await (id, sample) in group { if let sample { collected.append((id, sample)) } }
            return collected
        }
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
