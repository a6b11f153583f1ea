import ScreenMedia

/// Which published streams can have a second rendition, which have one, and who waits for one (protocol 7): the
/// bookkeeping of ``StreamRouter``'s renditions, pure and tested on its own.
///
/// A subscriber says which codec strings it decodes (`subscribe` with `decodes`). One that decodes the stream as
/// published gets it; one that decodes only a rendition the publisher offered (`publish` with `renditions`) gets
/// that rendition, which the publisher starts when the first such subscriber comes (``wants(_:codec:now:)``) and
/// stops once none has needed it for ``lingerSeconds`` (``stale(now:)``). A subscriber waiting longer than
/// ``startSeconds`` for it gets the stream as published, and its page its clear message.
struct RenditionBook {
    /// One primary stream's renditions.
    struct Entry {
        /// The codecs its publisher offered.
        var offers: [VideoCodec]
        /// The rendition stream, once its publisher published it.
        var rendition: (streamId: UInt32, codec: VideoCodec)?
        /// When the relay last asked the publisher to start one (nil: not asked, or it came).
        var askedAt: Double?
        /// Subscribers waiting for the rendition, with what they asked for and when.
        var waiting: [Waiting] = []
        /// Since when nobody has needed the rendition (nil: somebody does, or there is none).
        var unneededSince: Double?
        /// The relay asked the publisher to stop it.
        var stopping = false
        /// The codec of the rendition the session's HLS packages as a variant (a player reads its playlist): it runs
        /// as if it had a subscriber.
        var hlsReads: VideoCodec?
    }

    struct Waiting: Equatable {
        var connectionId: String
        var audio: Bool
        var layers: Bool
        var catchUp: Bool
        var since: Double
    }

    /// How long a rendition outlives the last subscriber that needed it: a viewer that reloads its page, or the
    /// next one to join, finds it running (a restart costs a keyframe of the new encoder and up to a second).
    static let lingerSeconds = 10.0
    /// How long a subscriber waits for a rendition before it gets the stream as published.
    static let startSeconds = 5.0
    /// How often the relay asks a publisher that has not started a rendition to start it.
    static let askIntervalSeconds = 5.0

    private(set) var entries: [UInt32: Entry] = [:]
    /// For each rendition's stream id, its primary's.
    private(set) var primaryOf: [UInt32: UInt32] = [:]

    mutating func published(_ streamId: UInt32, offers: [VideoCodec]) {
        guard !offers.isEmpty else { return }
        entries[streamId] = Entry(offers: Array(Set(offers)).sorted { $0.rawValue < $1.rawValue })
    }

    func offers(_ streamId: UInt32) -> [VideoCodec] { entries[streamId]?.offers ?? [] }

    /// Whether the relay has asked `streamId`'s publisher for its rendition and it has not come yet.
    func isAsked(_ streamId: UInt32) -> Bool { entries[streamId]?.askedAt != nil }
    func rendition(of streamId: UInt32) -> (streamId: UInt32, codec: VideoCodec)? { entries[streamId]?.rendition }

    /// The codec strings of a rendition in `codec` before it exists: what a subscriber's `decodes` is matched with.
    /// H.264 is screenpub's Constrained Baseline at whatever level (`avc1.42`).
    static func expectedCodecString(_ codec: VideoCodec) -> String {
        switch codec {
        case .h264: "avc1.42C0"
        case .vp8: "vp8"
        case .vp9: "vp09.00"
        case .av1: "av01.0"
        }
    }

    /// Whether a subscriber that decodes `decodes` decodes pictures of `codecString`: one of them begins it
    /// (`av01.0` decodes `av01.0.08M.08`), or it begins one of them.
    static func decodes(_ decodes: [String], _ codecString: String) -> Bool {
        // Compared without case, as RFC 6381 compares codec strings (`AVC1.42` is `avc1.42`).
        let codecString = codecString.lowercased()
        return decodes.contains { said in
            let said = said.lowercased()
            return !said.isEmpty && (codecString.hasPrefix(said) || said.hasPrefix(codecString))
        }
    }

    /// A subscriber needs `codec` of `streamId`: it waits; returns whether to ask the publisher now.
    mutating func wants(_ streamId: UInt32, _ waiting: Waiting, codec: VideoCodec, now: Double) -> Bool {
        guard var entry = entries[streamId] else { return false }
        entry.waiting.removeAll { $0.connectionId == waiting.connectionId }
        entry.waiting.append(waiting)
        let ask = entry.askedAt.map { now - $0 >= Self.askIntervalSeconds } ?? true
        if ask { entry.askedAt = now }
        entries[streamId] = entry
        return ask
    }

    /// The publisher published `rendition` of `streamId`: returns who was waiting for it.
    mutating func started(_ rendition: UInt32, of streamId: UInt32, codec: VideoCodec, now: Double) -> [Waiting] {
        guard var entry = entries[streamId] else { return [] }
        entry.rendition = (rendition, codec)
        entry.askedAt = nil
        entry.stopping = false
        entry.unneededSince = entry.waiting.isEmpty && entry.hlsReads == nil ? now : nil
        let waiting = entry.waiting
        entry.waiting = []
        entries[streamId] = entry
        primaryOf[rendition] = streamId
        return waiting
    }

    /// A rendition ended (unpublished, or its publisher gone).
    mutating func ended(rendition: UInt32) {
        guard let streamId = primaryOf.removeValue(forKey: rendition) else { return }
        entries[streamId]?.rendition = nil
        entries[streamId]?.unneededSince = nil
        entries[streamId]?.stopping = false
    }

    /// A primary ended: its waiting subscribers are forgotten (they are told the stream ended).
    mutating func ended(primary streamId: UInt32) {
        if let rendition = entries.removeValue(forKey: streamId)?.rendition { primaryOf[rendition.streamId] = nil }
    }

    mutating func stopWaiting(_ connectionId: String, for streamId: UInt32) -> Bool {
        guard let index = entries[streamId]?.waiting.firstIndex(where: { $0.connectionId == connectionId }) else { return false }
        entries[streamId]?.waiting.remove(at: index)
        return true
    }

    func isWaiting(_ connectionId: String, for streamId: UInt32) -> Bool {
        entries[streamId]?.waiting.contains { $0.connectionId == connectionId } ?? false
    }

    mutating func forget(_ connectionId: String) {
        for streamId in entries.keys { entries[streamId]?.waiting.removeAll { $0.connectionId == connectionId } }
    }

    /// HLS starts or stops reading `codec` of `streamId` (its variant's playlist is asked for, or no longer): returns
    /// whether to ask the publisher for the rendition now. While HLS reads it, it is asked for again every
    /// ``askIntervalSeconds`` until it comes (``hlsAskDue(now:)``), and it is not stopped.
    mutating func hlsReads(_ streamId: UInt32, _ reads: Bool, codec: VideoCodec, now: Double) -> Bool {
        guard var entry = entries[streamId], entry.offers.contains(codec) else { return false }
        entry.hlsReads = reads ? codec : nil
        var ask = false
        if reads, entry.rendition == nil {
            ask = entry.askedAt.map { now - $0 >= Self.askIntervalSeconds } ?? true
            if ask { entry.askedAt = now }
        }
        entries[streamId] = entry
        return ask
    }

    /// The streams whose rendition HLS reads and that the publisher has not started since it was last asked, past
    /// ``askIntervalSeconds``: each to be asked again (marked asked now).
    mutating func hlsAskDue(now: Double) -> [(streamId: UInt32, codec: VideoCodec)] {
        var due: [(UInt32, VideoCodec)] = []
        for (streamId, entry) in entries where entry.rendition == nil {
            guard let codec = entry.hlsReads, entry.askedAt.map({ now - $0 >= Self.askIntervalSeconds }) ?? true else { continue }
            entries[streamId]?.askedAt = now
            due.append((streamId, codec))
        }
        return due.sorted { $0.0 < $1.0 }
    }

    /// The rendition's subscriber count now: from none (and no HLS reading it), its linger starts; from some, it
    /// stops. Written only when that changes (asked on every tick).
    mutating func renditionSubscribers(_ count: Int, of streamId: UInt32, now: Double) {
        guard let entry = entries[streamId], entry.rendition != nil else { return }
        let count = entry.hlsReads != nil ? count + 1 : count
        if count > 0, entry.unneededSince != nil {
            entries[streamId]?.unneededSince = nil
        } else if count == 0, entry.unneededSince == nil {
            entries[streamId]?.unneededSince = now
        }
    }

    /// Whether anything may expire at `now` (``expired(now:)``): a subscriber waiting, or an unneeded rendition not
    /// yet stopped. Checked on every tick without allocating; most ticks have neither.
    func mayExpire(now: Double) -> Bool {
        entries.values.contains { entry in
            !entry.waiting.isEmpty || (entry.hlsReads != nil && entry.rendition == nil)
                || (entry.rendition != nil && !entry.stopping && entry.unneededSince.map { now - $0 >= Self.lingerSeconds } == true)
        }
    }

    /// Subscribers that waited past ``startSeconds`` (each to get the stream as published), and renditions unneeded
    /// past ``lingerSeconds`` (each to be stopped; asked once).
    mutating func expired(now: Double) -> (waitedTooLong: [(streamId: UInt32, Waiting)], toStop: [(streamId: UInt32, codec: VideoCodec)]) {
        var waited: [(UInt32, Waiting)] = []
        var toStop: [(UInt32, VideoCodec)] = []
        for streamId in entries.keys.sorted() {
            guard var entry = entries[streamId] else { continue }
            let (late, onTime) = (entry.waiting.filter { now - $0.since >= Self.startSeconds }, entry.waiting.filter { now - $0.since < Self.startSeconds })
            waited += late.map { (streamId, $0) }
            entry.waiting = onTime
            if let rendition = entry.rendition, !entry.stopping, let since = entry.unneededSince, now - since >= Self.lingerSeconds {
                entry.stopping = true
                toStop.append((streamId, rendition.codec))
            }
            entries[streamId] = entry
        }
        return (waited, toStop)
    }
}
