import Foundation

/// What sound a share carries.
public enum AudioInput: Sendable, Hashable, CustomStringConvertible {
    /// What the desktop plays: the default output's monitor.
    case desktop
    /// The default input (a microphone).
    case microphone
    /// A PipeWire node by id or `node.name`; for an output (a sink), what it plays.
    case node(String)

    /// `desktop`, `mic` or a node; nil for `none`.
    public init?(argument: String) {
        switch argument.lowercased() {
        case "none", "": return nil
        case "desktop": self = .desktop
        case "mic", "microphone": self = .microphone
        default: self = .node(argument)
        }
    }

    public var description: String {
        switch self {
        case .desktop: "the desktop's sound"
        case .microphone: "the microphone"
        case .node(let node): "PipeWire node \(node)"
        }
    }
}

public struct PipeWireAudioOptions: Sendable, Hashable {
    public var remote: PipeWireRemote
    public var input: AudioInput
    /// Seconds to wait for PipeWire to link the stream and agree on a format.
    public var linkTimeout: Double

    public init(remote: PipeWireRemote = .default, input: AudioInput, linkTimeout: Double = 5) {
        self.remote = remote
        self.input = input
        self.linkTimeout = linkTimeout
    }
}
