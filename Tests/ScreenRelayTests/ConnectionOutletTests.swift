import NIOCore
@testable import ScreenRelay
import ScreenMedia
import ScreenTesting
import Testing

/// A connection's outgoing queue on its own: order, the end, a cancelled writer, and its bounds.
@Suite(.watchdog()) struct ConnectionOutletTests {
    @Test func itemsComeOutInOrderAndFinishDrainsFirst() async {
        let outlet = ConnectionOutlet(limits: .init(messages: 100, bytes: 1 << 20))
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
        let outlet = ConnectionOutlet(limits: .init(messages: 100, bytes: 1 << 20))
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
            case .frame(let buffer, _), .audio(let buffer, _): order.append(String(buffer: buffer))
            case .control(let text): order.append(text)
            case .close: order.append("close")
            }
            outlet.sent(item)
        }
        // Sound first while pictures wait; a control message keeps its place among the pictures.
        #expect(order == ["c0", "a1", "a2", "v1", "v2", "c1", "v3"])
    }

    @Test func aWaitingWriterGetsWhatComesAndACancelledOneGetsNil() async {
        let outlet = ConnectionOutlet(limits: .init(messages: 100, bytes: 1 << 20))
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
        let outlet = ConnectionOutlet(limits: .init(messages: 3, bytes: 1 << 20))
        let overflows = Locked(0)
        outlet.onOverflow { _ in overflows.withLock { $0 += 1 } }
        for index in 0..<10 { outlet.yield(.control("m\(index)")) }
        #expect(outlet.overflowed)
        #expect(overflows.value == 1)
        #expect(await outlet.next() == nil)
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
        case (.frame(let a, let x), .frame(let b, let y)): a == b && x == y
        case (.close(let a, let x), .close(let b, let y)): a == b && x == y
        default: false
        }
    }
}
