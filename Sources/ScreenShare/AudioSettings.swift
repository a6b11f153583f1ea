import Foundation
public import ScreenCapturePipeWire
import ScreenCaptureX11
import ScreenCodec
import ScreenMedia
import ScreenPipeline

/// The share's sound: what is captured, at what Opus bit rate, and whether the share goes on without it
/// when it cannot be captured.
public struct AudioSettings: Sendable, Equatable {
    public var input: AudioInput
    public var bitrateKbps: Int
    public var optional: Bool
    public var remote: PipeWireRemote

    public init(input: AudioInput, bitrateKbps: Int = 64, optional: Bool = false, remote: PipeWireRemote = .default) {
        self.input = input
        self.bitrateKbps = bitrateKbps
        self.optional = optional
        self.remote = remote
    }
}
