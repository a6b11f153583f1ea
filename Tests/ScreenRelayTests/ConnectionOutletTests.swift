import NIOCore
@testable import ScreenRelay
import ScreenMedia
import ScreenTesting
import ScreenWire
import Testing

/// A connection's outgoing queue on its own: order, the end, a cancelled writer, and its bounds.
@Suite(.watchdog()) struct ConnectionOutletTests {
    @Test func itemsComeOutInOrderAndFinishDrainsFirst() async {
        let outlet = ConnectionOutlet(limits: .init(messages: 100, controlBytes: 1 << 20))
        for index in 0..<5 { outlet.yield(.control("m\(index)")) }
        outlet.finish()
        var seen: [String] = []
        while let item = await outlet.next() {
            if case .control(let text) = item { seen.append(text) }
            outlet.sent(item)
        }
        #expect(seen == ["m0", "m1", "m2", "m3", "m4"])
        outlet.yield(.control("after the end"))
        #expect(await outlet.next() == nil)
    }

    @Test func audioGoesAheadOfQueuedVideoButNotOfAControlMessageDueFirst() async {
        let outlet = ConnectionOutlet(limits: .init(messages: 100, controlBytes: 1 << 20))
        outlet.yield(.control("c0"))
        outlet.yield(.frame(ByteBuffer(string: "v1"), streamId: 1))
        outlet.yield(.frame(ByteBuffer(string: "v2"), streamId: 1))
        outlet.yield(.audio(ByteBuffer(string: "a1"), streamId: 1))
        outlet.yield(.control("c1"))
        outlet.yield(.frame(ByteBuffer(string: "v3"), streamId: 1))
        outlet.yield(.audio(ByteBuffer(string: "a2"), streamId: 1))
        outlet.finish()
        var order: [String] = []
        while let item = await outlet.next() {
            switch item {
            case .frame(let buffer, _, _), .audio(let buffer, _): order.append(String(buffer: buffer))
            case .control(let text): order.append(text)
            case .close: order.append("close")
            }
            outlet.sent(item)
        }
        // Sound first while pictures wait; a control message keeps its place among the pictures.
        #expect(order == ["c0", "a1", "a2", "v1", "v2", "c1", "v3"])
    }

    @Test func aWaitingWriterGetsWhatComesAndACancelledOneGetsNil() async {
        let outlet = ConnectionOutlet(limits: .init(messages: 100, controlBytes: 1 << 20))
        let writer = Task { await outlet.next() }
        try? await Task.sleep(for: .milliseconds(50))
        outlet.yield(.control("hello"))
        if case .control(let text)? = await writer.value { #expect(text == "hello") } else { Issue.record("nothing came") }
        let cancelled = Task { await outlet.next() }
        try? await Task.sleep(for: .milliseconds(50))
        cancelled.cancel()
        #expect(await cancelled.value == nil)
    }

    @Test func passingTheBoundsOverflowsOnceAndDropsWhatWasQueued() async {
        let outlet = ConnectionOutlet(limits: .init(messages: 3, controlBytes: 1 << 20))
        let overflows = Locked(0)
        outlet.onOverflow { _ in overflows.withLock { $0 += 1 } }
        for index in 0..<10 { outlet.yield(.control("m\(index)")) }
        #expect(outlet.overflowed)
        #expect(overflows.value == 1)
        #expect(await outlet.next() == nil)
    }

    @Test func everythingQueuedCountsInBytesUntilWrittenAndPastTheBudgetTheConnectionCloses() async {
        let relay = QueuedBytesBudget(ceiling: 64 << 20)
        let outlet = ConnectionOutlet(limits: .init(messages: 100, controlBytes: 1 << 20, bytes: 100_000), relay: relay)
        let reasons = Locked<[String]>([])
        outlet.onOverflow { reason in reasons.withLock { $0.append(reason) } }
        let frame = ByteBuffer(repeating: 1, count: 30_000)
        outlet.yield(.frame(frame, streamId: 1))
        outlet.yield(.frame(frame, streamId: 1))
        #expect(outlet.queuedBytes == 2 * (30_000 + 64))
        #expect(relay.queuedBytes == outlet.queuedBytes)
        // Written: it no longer counts, here or for the relay.
        if let item = await outlet.next() { outlet.sent(item) }
        #expect(outlet.queuedBytes == 30_064)
        #expect(relay.queuedBytes == 30_064)
        outlet.yield(.frame(frame, streamId: 1))
        outlet.yield(.frame(frame, streamId: 1))
        #expect(!outlet.overflowed)
        outlet.yield(.frame(frame, streamId: 1))  // 4 × 30 KB: over the 100 KB budget
        #expect(outlet.overflowed)
        #expect(reasons.value.count == 1 && reasons.value[0].contains("100000 bytes"))
        // What it held goes back to the relay at once.
        #expect(relay.queuedBytes == 0)
    }

    @Test func anEndedSubscriptionsQueuedMediaGoesAndTheRestKeepsItsOrder() async {
        let relay = QueuedBytesBudget()
        let outlet = ConnectionOutlet(limits: .init(messages: 100, controlBytes: 1 << 20), relay: relay)
        outlet.yield(.frame(ByteBuffer(string: "a1"), streamId: 1))
        outlet.yield(.frame(ByteBuffer(string: "b1"), streamId: 2))
        outlet.yield(.control("c"))
        outlet.yield(.audio(ByteBuffer(string: "a-sound"), streamId: 1))
        outlet.yield(.frame(ByteBuffer(string: "a2"), streamId: 1, flags: [.catchUp]))
        #expect(outlet.discardMedia(of: 1) == 2)
        #expect(outlet.queuedBytes == 2 + 64 + 1 + 64)
        #expect(relay.queuedBytes == outlet.queuedBytes)
        outlet.finish()
        var order: [String] = []
        while let item = await outlet.next() {
            switch item {
            case .frame(let buffer, _, _), .audio(let buffer, _): order.append(String(buffer: buffer))
            case .control(let text): order.append(text)
            case .close: order.append("close")
            }
            outlet.sent(item)
        }
        #expect(order == ["b1", "c"])
        #expect(relay.queuedBytes == 0)
    }

    @Test func pastTheRelaysCeilingOnlyAConnectionOverItsShareIsClosed() {
        // A 4 MiB ceiling shared by two connections: 2 MiB each.
        let relay = QueuedBytesBudget(ceiling: 4 << 20)
        let limits = ConnectionOutlet.Limits(messages: 100, controlBytes: 1 << 20, bytes: 64 << 20)
        let hog = ConnectionOutlet(limits: limits, relay: relay)
        let honest = ConnectionOutlet(limits: limits, relay: relay)
        honest.yield(.frame(ByteBuffer(repeating: 0, count: 100_000), streamId: 1))
        let chunk = ByteBuffer(repeating: 0, count: 500_000)
        var yielded = 0
        while !hog.overflowed && yielded < 100 {
            hog.yield(.frame(chunk, streamId: 1))
            yielded += 1
        }
        #expect(hog.overflowed, "the connection over its share was not closed")
        #expect(yielded <= 9)
        // The honest one, under its share, still takes frames, although the relay was at its ceiling.
        honest.yield(.frame(ByteBuffer(repeating: 0, count: 100_000), streamId: 1))
        #expect(!honest.overflowed)
        #expect(relay.queuedBytes == honest.queuedBytes)
    }

    @Test func aFrameGoesOutInPiecesWithItsOwnFlagsAndNoCopyOfItsPayload() throws {
        let header = MediaFrameHeader(
            streamID: 3, sequence: 9, flags: [.keyframe], codec: .vp9, width: 16, height: 16, captureTime: MediaTime(value: 1, timescale: 5),
            wallClockMilliseconds: 0, metadata: .empty, payloadLength: 200_000)
        var frame = ByteBuffer(bytes: header.encoded())
        frame.writeBytes((0..<200_000).map { UInt8(truncatingIfNeeded: $0) })
        let pieces = frame.framePieces(flags: [.keyframe, .catchUp], pieceSize: 65_536)
        #expect(pieces.count == 5)
        #expect(pieces.dropFirst().allSatisfy { $0.readableBytes <= 65_536 })
        var joined = ByteBuffer()
        for var piece in pieces { joined.writeBuffer(&piece) }
        let parsed = try joined.withUnsafeReadableBytes { try MediaFrameHeader.parse($0) }
        #expect(parsed.header.flags == [.keyframe, .catchUp])
        #expect(joined.getBytes(at: 5, length: joined.readableBytes - 5) == frame.getBytes(at: 5, length: frame.readableBytes - 5))
        // The original is untouched (it is shared with every other subscriber).
        #expect(frame.frameFlags == [.keyframe])
    }

    @Test func theQueueHoldsOnlyWhatIsWaiting() {
        var queue = FIFO<Int>()
        var next = 0
        // A million items through, never more than 100 waiting: the storage stays near 100.
        for round in 0..<10_000 {
            for _ in 0..<(round % 100 + 1) { queue.append(next); next += 1 }
            while queue.count > 50 { _ = queue.popFirst() }
        }
        #expect(queue.storageCapacity < 512)
        var last = -1
        while let value = queue.popFirst() {
            #expect(value > last)
            last = value
        }
        #expect(queue.isEmpty)
    }
}

extension Outgoing: Equatable {
    static func == (left: Outgoing, right: Outgoing) -> Bool {
        switch (left, right) {
        case (.control(let a), .control(let b)): a == b
        case (.frame(let a, let x, let f), .frame(let b, let y, let g)): a == b && x == y && f == g
        case (.close(let a, let x), .close(let b, let y)): a == b && x == y
        default: false
        }
    }
}
