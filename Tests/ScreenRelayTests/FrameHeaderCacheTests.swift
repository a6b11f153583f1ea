import NIOCore
import NIOWebSocket
import Testing

@testable import ScreenRelay

/// The WebSocket frame headers the relay's writers share: the bytes RFC 6455 §5.2 asks for, whichever were cached.
@Suite struct FrameHeaderCacheTests {
    let allocator = ByteBufferAllocator()

    @Test(arguments: [
        (0, [0x82, 0x00]), (125, [0x82, 125]), (126, [0x82, 126, 0x00, 126]), (65_535, [0x82, 126, 0xFF, 0xFF]),
        (65_536, [0x82, 127, 0, 0, 0, 0, 0, 1, 0, 0]),
    ])
    func aBinaryFramesHeaderHasItsLengthInTheShortestForm(length: Int, bytes: [Int]) {
        let header = FrameHeaderCache().header(fin: true, opcode: .binary, length: length, allocator: allocator)
        #expect(Array(header.readableBytesView) == bytes.map(UInt8.init))
    }

    @Test func finAndOpcodeAreInTheFirstByte() {
        let cache = FrameHeaderCache()
        #expect(cache.header(fin: false, opcode: .binary, length: 3, allocator: allocator).getInteger(at: 0, as: UInt8.self) == 0x02)
        #expect(cache.header(fin: true, opcode: .continuation, length: 3, allocator: allocator).getInteger(at: 0, as: UInt8.self) == 0x80)
        #expect(cache.header(fin: true, opcode: .text, length: 3, allocator: allocator).getInteger(at: 0, as: UInt8.self) == 0x81)
    }

    /// The cache answers by length, opcode and FIN together: never another frame's header, however many are asked
    /// for in turn (more than it keeps).
    @Test func aHeaderFromTheCacheIsTheOneThatWouldBeMade() {
        let cache = FrameHeaderCache()
        for round in 0..<3 {
            for length in [1, 2, 125, 126, 300, 65_536, 1_000_000, 2, 1] {
                for (fin, opcode) in [(true, WebSocketOpcode.binary), (false, .binary), (true, .continuation), (true, .text)] {
                    let cached = cache.header(fin: fin, opcode: opcode, length: length, allocator: allocator)
                    let made = FrameHeaderCache.make(firstByte: UInt8(webSocketOpcode: opcode) | (fin ? 0x80 : 0), length: length, allocator: allocator)
                    #expect(cached == made, "round \(round), length \(length), fin \(fin), \(opcode)")
                }
            }
        }
    }
}
