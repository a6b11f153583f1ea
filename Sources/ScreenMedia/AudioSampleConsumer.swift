/// Receives captured sound on the audio thread: 48 kHz interleaved float samples, lent for the call.
public protocol AudioSampleConsumer: AnyObject {
    /// `captureTime`: when the first sample was captured, on ``MonotonicClock``.
    func consume(_ samples: UnsafeBufferPointer<Float>, channels: Int, captureTime: MediaTime) throws
}
