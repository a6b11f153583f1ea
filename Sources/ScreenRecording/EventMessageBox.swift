/// A version-1 `emsg` box (ISO/IEC 23009-1 §5.10.3.3, as CMAF carries it ahead of a fragment): its message
/// shown at `presentationTime` (in `timescale` units, on the track's timeline) for `duration`.
/// With ``id3Scheme`` the message is an ID3 tag (AOM "Carriage of ID3 Timed Metadata in CMAF").
public struct EventMessageBox: Equatable, Sendable {
    public static let id3Scheme = "https://aomedia.org/emsg/ID3"

    public var schemeIdentifier: String
    public var value: String
    public var timescale: UInt32
    public var presentationTime: UInt64
    public var duration: UInt32
    public var identifier: UInt32
    public var message: [UInt8]

    public init(
        schemeIdentifier: String = EventMessageBox.id3Scheme, value: String = "", timescale: UInt32, presentationTime: UInt64,
        duration: UInt32, identifier: UInt32, message: [UInt8]
    ) {
        self.schemeIdentifier = schemeIdentifier
        self.value = value
        self.timescale = timescale
        self.presentationTime = presentationTime
        self.duration = duration
        self.identifier = identifier
        self.message = message
    }

    /// The whole box: size, `emsg`, version 1 and no flags, then the fields in version 1's order.
    public var bytes: [UInt8] {
        var body: [UInt8] = [1, 0, 0, 0]
        Self.append(timescale, to: &body)
        Self.append(UInt32(truncatingIfNeeded: presentationTime >> 32), to: &body)
        Self.append(UInt32(truncatingIfNeeded: presentationTime), to: &body)
        Self.append(duration, to: &body)
        Self.append(identifier, to: &body)
        body += Array(schemeIdentifier.utf8) + [0] + Array(value.utf8) + [0] + message
        var box: [UInt8] = []
        Self.append(UInt32(8 + body.count), to: &box)
        return box + Array("emsg".utf8) + body
    }

    private static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes += [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}
