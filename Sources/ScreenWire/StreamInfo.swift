public import ScreenMedia

/// A published stream as announced to the session.
public struct StreamInfo: Sendable, Hashable, Codable {
    public var streamId: UInt32
    public var connectionId: String
    public var name: String
    public var properties: StreamProperties
    /// For a rendition (protocol 7): the stream it is a second encoding of. Renditions are not announced as
    /// streams of their own; a subscriber of that stream is told when one serves it (`renditionChanged`).
    public var renditionOf: UInt32?

    public init(streamId: UInt32, connectionId: String, name: String, properties: StreamProperties, renditionOf: UInt32? = nil) {
        self.streamId = streamId
        self.connectionId = connectionId
        self.name = name
        self.properties = properties
        self.renditionOf = renditionOf
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
