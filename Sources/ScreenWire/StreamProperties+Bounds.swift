public import ScreenMedia

/// What a peer may announce of a stream, checked where its control message is parsed: every number is bounded
/// and finite before anything (a muxer's frame duration, a playlist's rate) computes with it.
extension StreamProperties {
    /// The bounds, as documented in docs/protocol.md.
    public enum Bounds {
        /// Picture sizes: 0 (not known yet) to 16384, as a frame header's 16-bit fields and every codec here allow.
        public static let size = 0...16_384
        /// Frames per second: more than 0, at most 240.
        public static let framesPerSecond = 0.001...240.0
        /// Capture delays, milliseconds: 0 to one minute.
        public static let captureDelayMilliseconds = 0.0...60_000.0
        /// Audio sample rates and channels.
        public static let sampleRate = 8_000...192_000
        public static let channels = 1...2
        /// The longest codec string (`av01.1.08H.08.0.000.01.01.01.0` is 30).
        public static let codecStringBytes = 64
    }

    /// The properties if every field is within ``Bounds``; else a `malformed` ``WireError`` naming the field.
    public func checkedBounds() throws(WireError) -> StreamProperties {
        func refuse(_ field: String, _ value: String, _ bounds: String) -> WireError {
            WireError(.malformed, "stream property \(field) is \(value); it must be \(bounds)")
        }
        guard Bounds.size.contains(width) else { throw refuse("width", "\(width)", "0 to \(Bounds.size.upperBound)") }
        guard Bounds.size.contains(height) else { throw refuse("height", "\(height)", "0 to \(Bounds.size.upperBound)") }
        guard Bounds.framesPerSecond.contains(estimatedFramesPerSecond) else {
            throw refuse("estimatedFramesPerSecond", "\(estimatedFramesPerSecond)", "above 0 and at most \(Int(Bounds.framesPerSecond.upperBound))")
        }
        guard Bounds.captureDelayMilliseconds.contains(estimatedCaptureDelayMilliseconds) else {
            throw refuse("estimatedCaptureDelayMilliseconds", "\(estimatedCaptureDelayMilliseconds)", "0 to 60000")
        }
        if let codecString {
            guard codecString.utf8.count <= Bounds.codecStringBytes,
                Self.isCodecStringText(codecString)
            else {
                throw WireError(.malformed, "stream property codecString must be at most \(Bounds.codecStringBytes) letters, digits, dots, dashes or underscores")
            }
        }
        if let audio {
            guard Bounds.sampleRate.contains(audio.sampleRate) else {
                throw refuse("audio.sampleRate", "\(audio.sampleRate)", "8000 to 192000")
            }
            guard Bounds.channels.contains(audio.channels) else { throw refuse("audio.channels", "\(audio.channels)", "1 or 2") }
            guard Bounds.captureDelayMilliseconds.contains(audio.estimatedCaptureDelayMilliseconds) else {
                throw refuse("audio.estimatedCaptureDelayMilliseconds", "\(audio.estimatedCaptureDelayMilliseconds)", "0 to 60000")
            }
        }
        return self
    }
}

extension UInt8 {
    fileprivate var isASCIIAlphanumeric: Bool { (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) }
}

extension StreamProperties {
    /// Whether `text` is made of what codec strings are: ASCII letters, digits, dots, dashes, underscores.
    static func isCodecStringText(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 < 0x80 && ($0 == 0x2E || $0 == 0x2D || $0 == 0x5F || $0.isASCIIAlphanumeric) }
    }
}
