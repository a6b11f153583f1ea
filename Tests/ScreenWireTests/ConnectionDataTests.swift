import ScreenWire
import Testing

/// A participant's name comes from the `name` field of its token's connection data, and only from there.
struct ConnectionDataTests {
    @Test func theNameFieldIsTheName() {
        #expect(ConnectionData.name(in: "name=Ada") == "Ada")
        #expect(ConnectionData.name(in: "team=blue&name=Ada%20Lovelace") == "Ada Lovelace")
        #expect(ConnectionData.name(in: "name=Ada+L") == "Ada L")
        #expect(ConnectionData.name(in: "name=") == nil)
        #expect(ConnectionData.name(in: "Ada") == nil, "data in another form is never shown as a name")
        #expect(ConnectionData.with(name: "Ada Lovelace", extra: "team=blue") == "name=Ada%20Lovelace&team=blue")
        #expect(ConnectionData.name(in: ConnectionData.with(name: "Zoë & co", extra: nil)) == "Zoë & co")
    }

    @Test func aSignalsSenderIsNamedNeverByDataOrConnectionID() {
        #expect(Signal(type: "chat", data: "hi", from: "c1", fromData: "name=Ada").senderName == "Ada")
        #expect(Signal(type: "chat", data: "hi", from: "c1", fromData: "secret=1").senderName == "someone")
        #expect(Signal(type: "chat", data: "hi", from: "c1").senderName == "someone")
        #expect(Signal(type: "chat", data: "hi").senderName == "server")
    }
}
