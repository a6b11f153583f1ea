public import ScreenMedia
import ScreenTransport
import ScreenWire

/// The second rendition (protocol 7): its frames from the capture thread into a queue of their own, published as a
/// stream of their own at the first, sent after the share's own frames, unpublished when the relay stops it.
extension RelayPublisher {
    /// Where the capture thread writes the second rendition's frames.
    public var renditionSink: any EncodedFrameSink { RenditionSink(publisher: self) }

    private final class RenditionSink: EncodedFrameSink {
        let publisher: RelayPublisher
        init(publisher: RelayPublisher) { self.publisher = publisher }
        func write(_ frame: EncodedFrame) throws { publisher.writeRendition(frame) }
        func finish() throws {}
    }

    /// Queues one frame of the second rendition; a frame that overflows its queue asks for its keyframe.
    fileprivate func writeRendition(_ frame: EncodedFrame) {
        let pending = PendingFrame(frame)
        let wakeUp = state.withLock { state -> AsyncStream<Void>.Continuation? in
            guard state.failure == nil, !state.finished, renditions.wantedCodec == frame.codec else { return nil }
            if state.renditionQueue.push(video: pending) { renditions.requestKeyframe() }
            return state.wakeUp
        }
        wakeUp?.yield()
    }

    /// Sends one frame of the rendition, publishing it at its first (a keyframe: a rendition starts with one).
    func sendRendition(_ frame: PendingFrame, _ sender: inout StreamSender) async throws {
        guard sender.offersRenditions, let primary = sender.published, renditions.wantedCodec == frame.codec else { return }
        if sender.rendition?.codec != frame.codec {
            guard frame.isKeyframe else { return }
            let properties = state.value.announced.properties(codec: frame.codec, width: frame.width, height: frame.height, keyframe: frame.payload)
            try await sender.link.send(.publishRendition(streamId: primary.id, properties: properties))
            guard let id = await sender.renditionAnswers.next() else {
                throw RelayClientError(.closed, "the relay closed the connection before accepting the rendition")
            }
            sender.rendition = (id, frame.codec)
            sender.renditionSequence = 0
        }
        guard let rendition = sender.rendition else { return }
        // A relay of protocol 7 reads layer ids.
        let header = frame.header(streamId: rendition.id, sequence: sender.renditionSequence, readsLayers: true)
        try await sender.link.send(header, payload: frame.payload)
        sender.renditionSequence += 1
    }

    /// Unpublishes the rendition once the relay has stopped it and its last frames are out.
    func unpublishStoppedRendition(_ sender: inout StreamSender) async throws {
        guard let rendition = sender.rendition, renditions.wantedCodec != rendition.codec else { return }
        try await sender.link.send(.unpublish(streamId: rendition.id))
        sender.rendition = nil
        state.withLock {
            $0.renditionStreamId = nil
            _ = $0.renditionQueue.startNewStream()
        }
        logger.info("stopped the \(rendition.codec) rendition: no viewer or HLS player needs it")
    }
}
