public import ScreenMedia

/// A published stream as announced to the session.
public struct StreamInfo: Sendable, Hashable, Codable {
    public var streamId: UInt32
    public var connectionId: String
    public var name: String
    public var properties: StreamProperties

    public init(streamId: UInt32, connectionId: String, name: String, properties: StreamProperties) {
        self.streamId = streamId
        self.connectionId = connectionId
        self.name = name
        self.properties = properties
    }
}

extension StreamInfo {
    /// The stream if its properties are within bounds (``StreamProperties/checkedBounds()``).
    func checkedBounds() throws(WireError) -> StreamInfo {
        var checked = self
        checked.properties = try properties.checkedBounds()
        return checked
    }
}
