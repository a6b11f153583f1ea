@testable import ScreenSession
import Testing

struct PublishQueueTests {
    /// A made-up frame: its number (which is also its capture time at 5 fps), whether it is a keyframe, its size.
    struct Frame: QueuedVideoFrame, Equatable {
        var number: Int
        var isKeyframe: Bool = false
        var byteCount: Int = 100
        var captureSeconds: Double { Double(number) / 5 }
    }

    /// Video bounded to `seconds` of capture time (at 5 fps, 1 s is 5 frames apart).
    static func queue(seconds: Double = 1, audio: Int = 3) -> PublishQueue<Frame, Int> {
        PublishQueue(maximumVideoSeconds: seconds, audioLimit: audio)
    }

    @Test func framesLeaveInOrderSoundFirst() {
        var queue = Self.queue()
        _ = queue.push(video: Frame(number: 0, isKeyframe: true))
        _ = queue.push(video: Frame(number: 1, byteCount: 50))
        #expect(queue.queuedVideoBytes == 150)
        queue.push(audio: 10)
        let sent = [queue.nextAudio(), queue.nextAudio()]
        let frames = [queue.nextVideo(), queue.nextVideo(), queue.nextVideo()]
        #expect(sent == [10, nil] && frames.map { $0?.number } == [0, 1, nil])
        #expect(queue.queuedVideoBytes == 0)
    }

    /// Past its time bound the queue keeps what it holds (it still goes out); the delta that does not fit and
    /// those after it are dropped, a keyframe is asked for once, and it supersedes what still waits.
    @Test func pastItsBoundTheQueueKeepsWhatItHoldsAndWaitsForAKeyframe() {
        var queue = Self.queue(seconds: 1)
        for number in 0...5 {
            let asks = queue.push(video: Frame(number: number, isKeyframe: number == 0))
            #expect(!asks)
        }
        #expect(queue.queuedVideoFrames == 6, "0 to 5 span exactly 1 s")
        let overflowAsks = queue.push(video: Frame(number: 6))
        #expect(overflowAsks, "the overflow asks for a keyframe")
        #expect(queue.queuedVideoFrames == 6 && queue.awaitingKeyframe, "nothing queued was thrown away")
        let deltaAsks = queue.push(video: Frame(number: 7))
        #expect(!deltaAsks, "asked once, not again for each delta")
        #expect(queue.nextVideo()?.number == 0, "the queued frames still go out, keyframe first")
        #expect(queue.droppedVideoFrames == 2)
        let keyAsks = queue.push(video: Frame(number: 8, isKeyframe: true))
        #expect(!keyAsks)
        #expect(!queue.awaitingKeyframe && queue.queuedVideoFrames == 1 && queue.droppedVideoFrames == 7)
        #expect(queue.nextVideo()?.number == 8)
    }

    /// A keyframe is always queued, whatever the bound: it is what a viewer restarts from.
    @Test func aKeyframeIsNeverDropped() {
        var queue = Self.queue(seconds: 0.1)
        _ = queue.push(video: Frame(number: 0, isKeyframe: true))
        _ = queue.push(video: Frame(number: 10, isKeyframe: true))
        #expect(queue.queuedVideoFrames == 1 && queue.nextVideo()?.number == 10)
    }

    /// A new connection's stream starts with a keyframe: queued deltas go; a queue that starts with one stays.
    @Test func aNewStreamStartsWithAKeyframe() {
        var deltas = Self.queue()
        _ = deltas.push(video: Frame(number: 7))
        let asked = deltas.startNewStream()
        #expect(asked && deltas.queuedVideoFrames == 0 && deltas.awaitingKeyframe && deltas.queuedVideoBytes == 0)
        var keyed = Self.queue()
        _ = keyed.push(video: Frame(number: 8, isKeyframe: true))
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
