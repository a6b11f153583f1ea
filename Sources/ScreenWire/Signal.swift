/// A signal: a short typed text message from a client (or the server) to one connection or to the whole
/// session — text chat is the type `chat`. On the wire: `{"v":1,"type":"signal","signalType":…,"data":…,
/// "to":…}`; the relay adds `from` (the sender's connection id; absent when the server sent it) and
/// `fromData` (the sender's connection data) when it delivers it.
public struct Signal: Sendable, Hashable, Codable {
    /// 1–128 characters of `A-Z a-z 0-9 - _ ~`.
    public var type: String
    /// At most ``maximumDataSize`` bytes of UTF-8.
    public var data: String
    /// A connection id; nil sends to every connection of the session, the sender included.
    public var to: String?
    /// Set by the relay: who sent it (nil: the server, through its HTTP API).
    public var from: String?
    /// Set by the relay: the sender's connection data.
    public var fromData: String?

    public static let maximumTypeLength = 128
    public static let maximumDataSize = 8 * 1024

    public init(type: String, data: String, to: String? = nil, from: String? = nil, fromData: String? = nil) {
        self.type = type
        self.data = data
        self.to = to
        self.from = from
        self.fromData = fromData
    }

    /// Who sent it, for people: the `name` in the sender's connection data, else "someone"; "server" for the HTTP API.
    public var senderName: String {
        guard from != nil else { return "server" }
        // The name the sender's token carries (`name=Ada`); never its raw data or connection id.
        return ConnectionData.name(in: fromData ?? "") ?? "someone"
    }

    enum CodingKeys: String, CodingKey {
        case type = "signalType"
        case data, to, from, fromData
    }

    /// Checks the limits; the error's code is `invalidSignal` and its message says which limit.
    public func validate() throws(WireError) {
        guard !type.isEmpty, type.utf8.count <= Self.maximumTypeLength else {
            throw WireError(.invalidSignal, "a signal type must be 1–\(Self.maximumTypeLength) characters, got \(type.utf8.count)")
        }
        guard type.utf8.allSatisfy(Self.isTypeCharacter) else {
            throw WireError(.invalidSignal, "a signal type may hold only A-Z a-z 0-9 - _ ~")
        }
        guard data.utf8.count <= Self.maximumDataSize else {
            throw WireError(.invalidSignal, "signal data of \(data.utf8.count) bytes exceeds \(Self.maximumDataSize)")
        }
    }

    private static func isTypeCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default: false
        }
    }
}
