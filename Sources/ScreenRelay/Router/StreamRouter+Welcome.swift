import ScreenWire

/// What a joiner's `welcome` lists of the session's connections: bounded, so that it always fits a control message.
extension StreamRouter {
    /// The bytes of connection ids and data a `welcome` lists at most: with ``Limits/maximumStreamsPerSession``
    /// streams, a welcome stays under the 64 KiB a control message may have, however many have joined.
    static var welcomeConnectionBytes: Int { 24 << 10 }

    /// The connections a joiner is told of: publishers and moderators first, then the others in the order they
    /// joined, as many as ``welcomeConnectionBytes`` allows (each joiner still hears of every later arrival and
    /// departure, as `connectionCreated` and `connectionDestroyed`).
    var welcomeConnections: [ConnectionInfo] {
        let all = connectionInfos
        var listed: [ConnectionInfo] = []
        var bytes = 0
        for connection in all.filter({ $0.role != .subscriber }) + all.filter({ $0.role == .subscriber }) {
            bytes += Self.jsonBytes(connection.connectionId) + Self.jsonBytes(connection.data) + 64
            guard bytes <= Self.welcomeConnectionBytes else { break }
            listed.append(connection)
        }
        return listed
    }

    /// What a string takes in JSON: control characters escaped to 6 bytes, `"` and `\` to 2.
    private static func jsonBytes(_ text: String) -> Int {
        text.utf8.reduce(0) { $0 + ($1 < 0x20 ? 6 : $1 == 0x22 || $1 == 0x5C ? 2 : 1) }
    }
}
