import Foundation
public import ScreenMedia

/// Where the PipeWire daemon is.
public enum PipeWireRemote: Sendable, Hashable {
    /// `$PIPEWIRE_REMOTE`, else `pipewire-0` in `$PIPEWIRE_RUNTIME_DIR` / `$XDG_RUNTIME_DIR`.
    case `default`
    /// A connected socket, e.g. from the ScreenCast portal's `OpenPipeWireRemote` (the source takes it over).
    case fileDescriptor(Int32)
}

public struct PipeWireCaptureOptions: Sendable, Hashable {
    public var remote: PipeWireRemote
    /// The node to capture (a portal stream's node id, or one from `pw-cli ls Node`).
    public var nodeID: UInt32
    /// Seconds to wait for the first frame before giving up with ``PipeWireCaptureFailure/noFrames``.
    public var firstFrameTimeout: Double
    /// Draw the pointer when the node sends it as cursor metadata (portal cursor mode "metadata"); a
    /// pointer the compositor embeds is in the pixels anyway.
    public var drawsCursor: Bool
    /// The node is to send the pointer as cursor metadata (the portal said so): its absence is warned about.
    public var expectsCursorMetadata: Bool
    /// Its regions are covered in every frame (a screen cast names no windows: window patterns do not apply).
    public var mask: PrivacyMask

    public init(
        remote: PipeWireRemote = .default, nodeID: UInt32, firstFrameTimeout: Double = 5, drawsCursor: Bool = true,
        expectsCursorMetadata: Bool = false, mask: PrivacyMask = PrivacyMask()
    ) {
        self.remote = remote
        self.nodeID = nodeID
        self.firstFrameTimeout = firstFrameTimeout
        self.drawsCursor = drawsCursor
        self.expectsCursorMetadata = expectsCursorMetadata
        self.mask = mask
    }
}
