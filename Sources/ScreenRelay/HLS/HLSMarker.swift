import Foundation
import ScreenMedia

/// A marker posted to `POST /session/{id}/marker`, checked and turned into an `EXT-X-DATERANGE`:
/// `{"id": "ad-1", "class": "…", "startDate": "ISO-8601", "duration": 30, "attributes": {"X-…": "text" or number,
/// "SCTE35-OUT": "hex", "SCTE35-IN": "hex", "SCTE35-CMD": "hex"}}`; only `id` is required (the start defaults to
/// now, the class to ``HLSDateRangeClass/marker``).
enum HLSMarker {
    static let maximumBodySize = 4096

    struct Invalid: Error, Equatable {
        let reason: String
    }

    static func parse(_ body: Data, now: WallClockTime) throws(Invalid) -> HLSSnapshot.DateRange {
        guard body.count <= maximumBodySize else { throw Invalid(reason: "a marker is at most \(maximumBodySize) bytes of JSON") }
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else {
            throw Invalid(reason: "the body must be a JSON object: {\"id\": …, \"class\": …, \"startDate\": …, \"duration\": …, \"attributes\": {…}}")
        }
        let known: Set = ["id", "class", "startDate", "duration", "attributes"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) { throw Invalid(reason: "unknown field \"\(unknown)\"") }
        guard let id = object["id"] as? String, isToken(id) else {
            throw Invalid(reason: "\"id\" is required: 1-64 letters, digits and . _ : -")
        }
        var range = HLSSnapshot.DateRange(id: id, className: HLSDateRangeClass.marker, start: now)
        if let className = object["class"] {
            guard let className = className as? String, isToken(className) else {
                throw Invalid(reason: "\"class\" must be 1-64 letters, digits and . _ : -")
            }
            range.className = className
        }
        if let start = object["startDate"] {
            guard let text = start as? String, let date = parseDate(text) else {
                throw Invalid(reason: "\"startDate\" must be an ISO-8601 date and time, e.g. 2026-11-23T10:00:00.000Z")
            }
            range.start = WallClockTime(millisecondsSince1970: Int64((date.timeIntervalSince1970 * 1000).rounded()))
        }
        if let duration = object["duration"] {
            guard let seconds = (duration as? NSNumber)?.doubleValue, !(duration is Bool), seconds >= 0, seconds <= 86_400 * 7 else {
                throw Invalid(reason: "\"duration\" must be a number of seconds, 0 or more")
            }
            range.attributes["DURATION"] = HLSPlaylist.decimal(seconds, places: 3)
        }
        if let attributes = object["attributes"] {
            guard let attributes = attributes as? [String: Any] else { throw Invalid(reason: "\"attributes\" must be an object") }
            for (name, value) in attributes {
                range.attributes[name] = try attribute(name, value)
            }
        }
        return range
    }

    /// One attribute as written in the tag: SCTE-35 splice info as hex, client (`X-`) ones quoted or as numbers.
    private static func attribute(_ name: String, _ value: Any) throws(Invalid) -> String {
        if ["SCTE35-OUT", "SCTE35-IN", "SCTE35-CMD"].contains(name) {
            guard let text = value as? String else { throw Invalid(reason: "\(name) must be the splice info section as hex, e.g. \"0xFC30…\"") }
            let digits = text.hasPrefix("0x") || text.hasPrefix("0X") ? text.dropFirst(2) : Substring(text)
            guard !digits.isEmpty, digits.count % 2 == 0, digits.count <= 2048, digits.allSatisfy(\.isHexDigit) else {
                throw Invalid(reason: "\(name) must be an even number of hex digits (the splice info section), got \"\(text.prefix(40))\"")
            }
            return "0x" + digits.uppercased()
        }
        let nameCharacters = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")
        guard name.hasPrefix("X-"), name.count > 2, name.count <= 64, name.allSatisfy(nameCharacters.contains) else {
            throw Invalid(reason: "attribute \"\(name.prefix(40))\": client attributes are X- followed by A-Z, 0-9 and -; others are SCTE35-OUT, SCTE35-IN, SCTE35-CMD")
        }
        if let text = value as? String {
            guard !text.contains("\""), !text.contains("\n"), !text.contains("\r") else {
                throw Invalid(reason: "attribute \(name): a text value cannot contain a double quote or a line break")
            }
            return "\"\(text)\""
        }
        if let number = value as? NSNumber, !(value is Bool), number.doubleValue.isFinite {
            return HLSPlaylist.decimal(number.doubleValue, places: 3)
        }
        throw Invalid(reason: "attribute \(name) must be text or a number")
    }

    private static func isToken(_ text: String) -> Bool {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-")
        return (1...64).contains(text.count) && text.allSatisfy(allowed.contains)
    }

    private static func parseDate(_ text: String) -> Date? {
        let withFraction = ISO8601DateFormatter()
        withFraction.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return withFraction.date(from: text) ?? ISO8601DateFormatter().date(from: text)
    }
}
