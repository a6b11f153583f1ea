/// Where encoded audio goes, beside the video frames of the same share: a sink that carries sound (a relay
/// connection, a WebM file) also conforms to this. In a share, audio comes from the audio thread while the
/// capture thread writes video into the same object: such sinks are also `Sendable` and keep the two safe
/// together: they are ``ConcurrentAudioSink``s.
public protocol EncodedAudioSink: AnyObject {
    /// Takes one encoded audio frame; the payload is lent for this call only.
    func writeAudio(_ frame: EncodedAudioFrame) throws
}

/// An audio sink that takes its sound from another thread than its video (the share's audio thread beside
/// the capture thread), safely.
public protocol ConcurrentAudioSink: EncodedAudioSink, Sendable {}
