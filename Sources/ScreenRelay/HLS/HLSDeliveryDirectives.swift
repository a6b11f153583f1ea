/// What an LL-HLS player asks of a playlist request in its query (RFC 8216bis 6.2.5): `_HLS_msn` and
/// `_HLS_part` (hold the answer until that segment or part is out) and `_HLS_skip` (a delta playlist). Parsed
/// with bounds at the edge: a number no playlist could reach is refused with a reason, never trusted.
struct HLSDeliveryDirectives: Sendable, Equatable {
    /// Where the answer waits for; nil answers at once.
    var position: HLSSnapshot.Position?
    var skip = false

    struct Invalid: Error, Equatable {
        let reason: String
    }

    /// The largest segment or part number accepted (a stream of 6 s segments reaches it after 400 years).
    static let largestNumber = 2_000_000_000

    init(position: HLSSnapshot.Position? = nil, skip: Bool = false) {
        self.position = position
        self.skip = skip
    }

    /// From the request's query parameters (name → value; absent ones nil).
    init(msn: String?, part: String?, skip: String?) throws(Invalid) {
        func number(_ text: String, _ name: String) throws(Invalid) -> Int {
            guard text.utf8.count <= 10, let value = Int(text), (0...Self.largestNumber).contains(value) else {
                throw Invalid(reason: "\(name) must be a whole number from 0 to \(Self.largestNumber)")
            }
            return value
        }
        if let msn {
            position = HLSSnapshot.Position(segment: try number(msn, "_HLS_msn"), part: try part.map { text throws(Invalid) in try number(text, "_HLS_part") })
        } else if part != nil {
            throw Invalid(reason: "_HLS_part needs _HLS_msn")
        }
        switch skip {
        case nil: self.skip = false
        case "YES", "v2": self.skip = true
        default: throw Invalid(reason: "_HLS_skip must be YES or v2")
        }
    }

    /// Why the relay will not wait for `position` given what is out now (`snapshot`): a segment more than two
    /// past the live one, or a part more than three past the next (RFC 8216bis: answer 400 at once) — in a later
    /// segment, whose first part is the next at the soonest, a part past its fourth; nil if it may wait.
    static func tooFarAhead(_ position: HLSSnapshot.Position, of snapshot: HLSSnapshot) -> String? {
        let live = snapshot.liveSegment
        if position.segment > live + 2 {
            return "segment \(position.segment) is more than two past the live one (\(live))"
        }
        let nextPart = snapshot.nextPart
        if position.segment == live, let part = position.part, part > nextPart + 3 {
            return "part \(part) of segment \(live) is more than three past the next one (\(nextPart))"
        }
        if position.segment > live, let part = position.part, part > 3 {
            return "part \(part) of segment \(position.segment) is more than three past the next one (at the soonest part 0 of segment \(live + 1))"
        }
        return nil
    }
}
