public import ScreenMedia

/// The share's second rendition on the capture thread: an encoder of its own, started when a relay asks for the
/// rendition (``RenditionRequests``) and dropped when it no longer does, fed the same frames as the share's own
/// encoder (same capture times and metadata; held frames are skipped in it too), into its own sink.
///
/// Its rate is a share of the primary's (``rateShare``): both go up the same uplink, whose controller measures
/// the primary's frames and lowers the target for both when the second one crowds the link.
public final class RenditionEncoding {
    private let requests: RenditionRequests
    private let makeEncoder: (VideoCodec) -> any VideoEncoder
    private let sinks: [any EncodedFrameSink]
    private var encoder: (any VideoEncoder)?
    private var appliedTargetKbps: Int?

    /// The rendition's target as a share of the primary's.
    public static let rateShare = 0.5

    public init(requests: RenditionRequests, sinks: [any EncodedFrameSink], makeEncoder: @escaping (VideoCodec) -> any VideoEncoder) {
        self.requests = requests
        self.sinks = sinks
        self.makeEncoder = makeEncoder
    }

    /// Starts or stops the encoder as asked. Whether the rendition needs a picture now, whatever the screen does
    /// (it has just started, or its keyframe was asked for).
    func update() -> Bool {
        let wanted = requests.wantedCodec
        if wanted != encoder?.codec {
            encoder = wanted.map(makeEncoder)
            appliedTargetKbps = nil
        }
        return encoder != nil && requests.takeKeyframe()
    }

    /// Codes `frame` (its metadata stamped by the pipeline) in the rendition, when one runs; `keyframe` when it
    /// must be one.
    func encode(_ frame: VideoFrame, refinement: Bool, keyframe: Bool, primaryTargetKbps: Int?) throws {
        guard let encoder else { return }
        if let primaryTargetKbps {
            let target = max(1, Int(Double(primaryTargetKbps) * Self.rateShare))
            if target != appliedTargetKbps {
                try encoder.setTargetBitrate(kbps: target)
                appliedTargetKbps = target
            }
        }
        if keyframe || requests.takeKeyframe() { encoder.requestKeyframe() }
        // Closure literals, not a closure stored in a local: non-escaping, so nothing is allocated per frame.
        if refinement {
            try encoder.refine(frame) { try write($0) }
        } else {
            try encoder.encode(frame) { try write($0) }
        }
    }

    private func write(_ frame: EncodedFrame) throws {
        for sink in sinks { try sink.write(frame) }
    }

    /// Takes a held frame's changes into the rendition's picture.
    func skip(_ frame: VideoFrame) { encoder?.skip(frame) }

    var isRunning: Bool { encoder != nil }
    var hasUnrefinedChanges: Bool { encoder?.hasUnrefinedChanges ?? false }
}

@available(*, unavailable, message: "runs on the capture thread")
extension RenditionEncoding: Sendable {}
