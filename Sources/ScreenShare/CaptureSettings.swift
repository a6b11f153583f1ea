import Foundation
import ScreenCapturePipeWire
import ScreenCaptureX11
public import ScreenCodec
import ScreenMedia
public import ScreenPipeline

/// The capture side's settings: source, encoder, metadata, timing.
public struct CaptureSettings: Sendable, Equatable {
    public var framesPerSecond: Double
    public var source: CaptureSource
    /// `--codec`; ``encoder``'s codec is what it resolves to (kept across SIGHUP: see ``ShareControl``).
    public var codec: VideoCodecChoice
    public var encoder: VideoEncoderConfiguration
    public var metadata: MetadataPolicy
    public var keepaliveInterval: Double?
    public var duration: Double?
}
