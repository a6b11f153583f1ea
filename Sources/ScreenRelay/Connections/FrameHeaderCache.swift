import NIOCore
import NIOPosix
import NIOWebSocket

/// The WebSocket frame headers an event loop's thread made last, to write again: a frame fanned out to many
/// subscribers is written by each of their writers on the same few loops within a millisecond, with the same
/// header (same length, opcode and FIN). One header buffer then serves them all (a buffer is immutable once
/// written, and shared), rather than one allocated a frame and subscriber.
final class FrameHeaderCache: @unchecked Sendable {
    // @unchecked Sendable: each thread has its own (``forThisThread``, a thread-specific variable), touched only
    // on that thread; it is never handed to another.
    private static let perThread = ThreadSpecificVariable<FrameHeaderCache>()

    /// This thread's cache (made on its first use).
    static var forThisThread: FrameHeaderCache {
        if let cache = perThread.currentValue { return cache }
        let cache = FrameHeaderCache()
        perThread.currentValue = cache
        return cache
    }

    /// A few: video and audio frames of a few streams interleave on a loop.
    private static let capacity = 8
    private var keys = [Int](repeating: -1, count: capacity)
    private var headers = [ByteBuffer](repeating: ByteBuffer(), count: capacity)
    private var next = 0

    /// A server's header for a frame (RFC 6455 §5.2: unmasked): one made before if this thread made it lately.
    func header(fin: Bool, opcode: WebSocketOpcode, length: Int, allocator: ByteBufferAllocator) -> ByteBuffer {
        let firstByte = UInt8(webSocketOpcode: opcode) | (fin ? 0x80 : 0)
        // Lengths past 2^55 cannot be frames of ours (a message is at most a few MiB): they are not cached.
        guard length >= 0, length < 1 << 55 else { return Self.make(firstByte: firstByte, length: length, allocator: allocator) }
        let key = length << 8 | Int(firstByte)
        for index in keys.indices where keys[index] == key { return headers[index] }
        let header = Self.make(firstByte: firstByte, length: length, allocator: allocator)
        keys[next] = key
        headers[next] = header
        next = (next + 1) % Self.capacity
        return header
    }

    /// FIN and opcode, then the payload's length in 7 bits, or 126 and 16 bits, or 127 and 64 bits.
    static func make(firstByte: UInt8, length: Int, allocator: ByteBufferAllocator) -> ByteBuffer {
        var header = allocator.buffer(capacity: 10)
        header.writeInteger(firstByte)
        switch length {
        case ..<126: header.writeInteger(UInt8(length))
        case ...Int(UInt16.max):
            header.writeInteger(UInt8(126))
            header.writeInteger(UInt16(length))
        default:
            header.writeInteger(UInt8(127))
            header.writeInteger(UInt64(length))
        }
        return header
    }
}
