import ScreenWire

/// Who joined and left a session, told to its members once a second (``StreamRouter/announcementSeconds``) rather
/// than as it happens: a connection that joins and leaves within the same second is never announced, so churning
/// connections costs the other members nothing, and what one token's joins can cost them is bounded by its join
/// allowance (``ControlRates``). Each member is told only what it does not know: a joiner's `welcome` already
/// lists those there when it came, so it is not told they came, and it is told of a departure only if it knew of
/// the one who left. Pure: the router says who joined and left, and when to flush.
struct MembershipAnnouncements {
    private enum Event {
        case joined(ConnectionInfo, serial: UInt64)
        case left(String, serial: UInt64, joinedSerial: UInt64)
    }

    /// Join numbers: who came before whom.
    private var serial: UInt64 = 0
    private(set) var joinedSerial: [String: UInt64] = [:]
    private var pending: [Event] = []
    /// Connections whose arrival has been announced (or was listed in a welcome to everyone since).
    private var announced: Set<String> = []
    private(set) var lastFlush: Double?

    var isEmpty: Bool { pending.isEmpty }

    mutating func joined(_ connection: ConnectionInfo) {
        serial &+= 1
        joinedSerial[connection.connectionId] = serial
        pending.append(.joined(connection, serial: serial))
    }

    mutating func left(_ connectionId: String) {
        guard let joined = joinedSerial.removeValue(forKey: connectionId) else { return }
        serial &+= 1
        pending.append(.left(connectionId, serial: serial, joinedSerial: joined))
    }

    /// The announcements due to `members` (in the order they joined), and the pending ones forgotten.
    mutating func flush(members: [String], now: Double) -> [(ControlMessage, to: String)] {
        lastFlush = now
        guard !pending.isEmpty else { return [] }
        let events = pending
        pending = []
        let leavers = Set(events.compactMap { if case .left(let id, _, _) = $0 { id } else { nil } })
        var messages: [(ControlMessage, to: String)] = []
        for event in events {
            switch event {
            case .joined(let connection, let joined):
                // Gone again before anyone was told: nobody is (those who joined meanwhile saw it in their welcome,
                // and are told it left below).
                guard !leavers.contains(connection.connectionId) else { continue }
                announced.insert(connection.connectionId)
                for member in members where member != connection.connectionId && (joinedSerial[member] ?? 0) < joined {
                    messages.append((.connectionCreated(connection), to: member))
                }
            case .left(let id, let left, let joined):
                let wasAnnounced = announced.remove(id) != nil
                // Those who knew: told of its arrival before (members older than it, once announced), or listed it in
                // their welcome (they joined after it and before it left).
                for member in members {
                    let memberJoined = joinedSerial[member] ?? 0
                    if memberJoined < left && (memberJoined > joined || wasAnnounced) {
                        messages.append((.connectionDestroyed(connectionId: id), to: member))
                    }
                }
            }
        }
        return messages
    }
}
