/// A stream's cached group of pictures: its last keyframe and the frames since, in order, with their layers and
/// sizes — what starts a new subscriber, a recording, or a subscriber that fell behind, without asking the
/// publisher for a keyframe. Past ``maximumFrames`` or its bytes bound it is dropped until the next keyframe
/// (which bounds the relay's memory per stream). `Frame` is the server's shared buffer: never copied.
struct PictureCache<Frame> {
    struct Entry {
        var frame: Frame
        var layer: Int
        var bytes: Int
        /// The router's count of the stream's frames when it came.
        var arrival: UInt64
    }

    /// The most frames it holds (SRS keeps up to 2500).
    static var maximumFrames: Int { 2500 }
    /// A group of more bytes than this many keyframes goes to a joiner as its layer-0 frames only: nobody knows yet
    /// what the joiner's link carries.
    static var longGroupInKeyframes: Int { 4 }

    let maximumBytes: Int
    /// Empty when unusable: none yet, or dropped for its size.
    private(set) var entries: [Entry] = []
    private(set) var bytes = 0

    init(maximumBytes: Int) { self.maximumBytes = maximumBytes }

    var keyframe: Entry? { entries.first }

    /// A frame came: a keyframe starts the group over; another joins it while it stays within its bounds.
    mutating func add(_ frame: Frame, layer: Int, bytes size: Int, arrival: UInt64, isKeyframe: Bool) {
        if isKeyframe {
            entries.removeAll(keepingCapacity: true)
            bytes = 0
        } else if entries.isEmpty {
            return
        }
        guard bytes + size <= maximumBytes, entries.count < Self.maximumFrames || isKeyframe else {
            entries.removeAll()
            bytes = 0
            return
        }
        entries.append(Entry(frame: frame, layer: layer, bytes: size, arrival: arrival))
        bytes += size
    }

    /// What starts a new subscriber at once, within `maximumBytes`: the whole group, or its layer-0 frames when it
    /// is long (then `layerZeroOnly`); nil when there is no group or it does not fit.
    func joining(maximumBytes: Int) -> (entries: [Entry], layerZeroOnly: Bool)? {
        guard let keyframe else { return nil }
        let long = bytes > Self.longGroupInKeyframes * keyframe.bytes
        let picked = long ? entries.filter { $0.layer == 0 } : entries
        guard picked.reduce(0, { $0 + $1.bytes }) <= maximumBytes else { return nil }
        return (picked, long)
    }

    /// The group as a catch-up plan reads it (``CatchUpPlan``).
    var planEntries: [CatchUpPlan.Entry] { entries.map { .init(layer: $0.layer, bytes: $0.bytes, arrival: $0.arrival) } }
}
