/// A least-squares line through the recent frames sent onto an idle link, time on the way (ms) against size
/// (bytes), each sample's weight decaying as new ones come: its slope is the link's rate, free of what the link
/// does to any frame whatever its size (a bucket's burst lowers the line, the way's delay raises it).
struct IdleLinkFit: Sendable {
    /// Each earlier sample's weight at each new one.
    static var keep: Double { 0.9 }
    /// Samples' weight before the line says anything, and the spread of sizes it needs (a share of their mean:
    /// pages of text and smaller changes).
    static var minimumWeight: Double { 4 }
    static var minimumSpread: Double { 0.1 }

    private var weight = 0.0
    private var bytes = 0.0
    private var milliseconds = 0.0
    private var bytesSquared = 0.0
    private var bytesTimesMilliseconds = 0.0

    mutating func add(bytes size: Int, milliseconds time: Double) {
        let x = Double(size)
        weight = weight * Self.keep + 1
        bytes = bytes * Self.keep + x
        milliseconds = milliseconds * Self.keep + time
        bytesSquared = bytesSquared * Self.keep + x * x
        bytesTimesMilliseconds = bytesTimesMilliseconds * Self.keep + x * time
    }

    /// The slope as a rate, kbit/s; nil until frames of sizes far enough apart have come, and when the line does
    /// not rise with size.
    var kbps: Double? {
        guard weight >= Self.minimumWeight else { return nil }
        let meanBytes = bytes / weight
        let variance = bytesSquared / weight - meanBytes * meanBytes
        guard variance > 0, variance.squareRoot() >= Self.minimumSpread * meanBytes else { return nil }
        let slope = (bytesTimesMilliseconds / weight - meanBytes * milliseconds / weight) / variance
        return slope > 0 ? 8 / slope : nil
    }
}
