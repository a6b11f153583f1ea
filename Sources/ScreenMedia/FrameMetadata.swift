#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Up to 32 bytes of application data carried with one video frame from publisher to every subscriber
/// and into recordings (the seed's `OTVideoFrame setMetadata:error:`).
///
/// Stored inline: making and copying metadata never allocates, so it can be set on every frame.
/// More than ``maximumSize`` bytes is an error, never a silent truncation.
public struct FrameMetadata: Sendable, Equatable, CustomStringConvertible {
    public static let maximumSize = 32

    private var storage: InlineArray<32, UInt8>
    public private(set) var count: Int

    /// No metadata.
    public static let empty = FrameMetadata()

    private init() {
        storage = InlineArray(repeating: 0)
        count = 0
    }

    /// Metadata from raw bytes; throws ``FrameMetadataError`` naming the size and the limit when too large.
    public init(bytes: some Collection<UInt8>) throws(FrameMetadataError) {
        guard bytes.count <= Self.maximumSize else {
            throw FrameMetadataError(size: bytes.count, limit: Self.maximumSize)
        }
        self.init()
        for (index, byte) in bytes.enumerated() { storage[index] = byte }
        count = bytes.count
    }

    /// Metadata from the UTF-8 bytes of `text`.
    public init(text: String) throws(FrameMetadataError) {
        try self.init(bytes: Array(text.utf8))
    }

    public var isEmpty: Bool { count == 0 }

    public var bytes: [UInt8] { (0..<count).map { storage[$0] } }

    /// Lends the bytes without copying them out.
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let count = self.count
        var copy = storage
        return try withUnsafeMutableBytes(of: &copy) { (raw) throws(Failure) -> Result in
            try body(UnsafeRawBufferPointer(rebasing: raw[0..<count]))
        }
    }

    /// Whether the bytes are valid UTF-8 (checked without allocating).
    public var isUTF8: Bool {
        withUnsafeBytes { raw in
            var iterator = raw.makeIterator()
            var decoder = UTF8()
            while true {
                switch decoder.decode(&iterator) {
                case .scalarValue: continue
                case .emptyInput: return true
                case .error: return false
                }
            }
        }
    }

    /// The bytes as text when they are valid UTF-8.
    public var text: String? {
        withUnsafeBytes { raw in
            String(validating: raw.bindMemory(to: UInt8.self), as: UTF8.self)
        }
    }

    public var description: String { text ?? bytes.map { hexDigits($0) }.joined() }

    public static func == (lhs: FrameMetadata, rhs: FrameMetadata) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for index in 0..<lhs.count where lhs.storage[index] != rhs.storage[index] { return false }
        return true
    }

    /// The default metadata of seed 000: the capture time as ISO-8601 UTC with milliseconds,
    /// e.g. `2026-11-22T05:10:22.123Z` (24 bytes). Formatted in place, without allocating.
    public static func iso8601(_ time: WallClockTime) -> FrameMetadata {
        var metadata = FrameMetadata()
        var seconds = time_t(time.secondsSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var position = 0
        func put(_ value: Int, digits: Int) {
            var divisor = 1
            for _ in 1..<digits { divisor *= 10 }
            var remaining = value
            while divisor > 0 {
                metadata.storage[position] = UInt8(ascii: "0") + UInt8(remaining / divisor % 10)
                position += 1
                remaining %= divisor
                divisor /= 10
            }
        }
        func put(_ ascii: Unicode.Scalar) {
            metadata.storage[position] = UInt8(ascii: ascii)
            position += 1
        }
        put(Int(parts.tm_year) + 1900, digits: 4); put("-")
        put(Int(parts.tm_mon) + 1, digits: 2); put("-")
        put(Int(parts.tm_mday), digits: 2); put("T")
        put(Int(parts.tm_hour), digits: 2); put(":")
        put(Int(parts.tm_min), digits: 2); put(":")
        put(Int(parts.tm_sec), digits: 2); put(".")
        put(Int(time.nanoseconds) / 1_000_000, digits: 3); put("Z")
        metadata.count = position
        return metadata
    }
}

private func hexDigits(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
}

/// Metadata larger than the 32-byte limit.
public struct FrameMetadataError: Error, Sendable, Equatable, CustomStringConvertible {
    public let size: Int
    public let limit: Int
    public var description: String {
        "frame metadata is \(size) bytes; the limit is \(limit) bytes (nothing is truncated: shorten it)"
    }
}
