@testable import ScreenSession
import Testing

struct PublishQueueTests {
    /// A made-up frame: its number and whether it is a keyframe.
    struct Frame: Sendable, Equatable {
        var number: Int
        var key: Bool = false
    }
    static func queue(video: Int = 4, audio: Int = 3) -> PublishQueue<Frame, Int> {
        PublishQueue(videoLimit: video, audioLimit: audio, isKeyframe: { $0.key })
    }

    @Test func framesLeaveInOrderSoundFirst() {
        var queue = Self.queue()
        _ = queue.push(video: Frame(number: 0, key: true))
        _ = queue.push(video: Frame(number: 1))
        queue.push(audio: 10)
        let sent = [queue.nextAudio(), queue.nextAudio()]
        let frames = [queue.nextVideo(), queue.nextVideo(), queue.nextVideo()]
        #expect(sent == [10, nil] && frames.map { $0?.number } == [0, 1, nil])
    }

    /// Full: everything queued goes, a keyframe is asked for once, and deltas are dropped until it comes.
    @Test func aFullQueueDropsToTheNextKeyframe() {
        var queue = Self.queue(video: 3)
        for number in 0..<3 { _ = queue.push(video: Frame(number: number, key: number == 0)) }
        let overflowAsks = queue.push(video: Frame(number: 3))
        #expect(overflowAsks, "the overflow asks for a keyframe")
        #expect(queue.queuedVideoFrames == 0 && queue.awaitingKeyframe)
        let deltaAsks = queue.push(video: Frame(number: 4))
        #expect(!deltaAsks, "asked once, not again for each delta")
        #expect(queue.droppedVideoFrames == 5)
        let keyAsks = queue.push(video: Frame(number: 5, key: true))
        #expect(!keyAsks)
        let next = queue.nextVideo()
        #expect(!queue.awaitingKeyframe && next?.number == 5)
    }

    /// A new connection's stream starts with a keyframe: queued deltas go; a queue that starts with one stays.
    @Test func aNewStreamStartsWithAKeyframe() {
        var deltas = Self.queue()
        _ = deltas.push(video: Frame(number: 7))
        let asked = deltas.startNewStream()
        #expect(asked && deltas.queuedVideoFrames == 0 && deltas.awaitingKeyframe)
        var keyed = Self.queue()
        _ = keyed.push(video: Frame(number: 8, key: true))
        _ = keyed.push(video: Frame(number: 9))
        let keyedAsked = keyed.startNewStream()
        #expect(!keyedAsked && keyed.queuedVideoFrames == 2)
        var empty = Self.queue()
        let emptyAsked = empty.startNewStream()
        #expect(!emptyAsked)
    }

    @Test func soundKeepsTheNewestWhenFull() {
        var queue = Self.queue(audio: 2)
        for sample in 0..<5 { queue.push(audio: sample) }
        let sent = [queue.nextAudio(), queue.nextAudio()]
        #expect(queue.droppedAudioFrames == 3 && sent == [3, 4])
    }
}
