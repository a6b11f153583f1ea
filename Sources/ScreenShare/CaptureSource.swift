import Foundation
public import ScreenCapturePipeWire
public import ScreenCaptureX11
import ScreenCodec
public import ScreenMedia
import ScreenPipeline

/// Where frames come from.
public enum CaptureSource: Sendable, Equatable {
    case x11(X11CaptureOptions)
    /// A PipeWire node given by id (no portal).
    case pipeWireNode(PipeWireCaptureOptions)
    /// What the ScreenCast portal grants.
    case portal(ScreenCastPortalRequest)

    /// For logs and `screenpub status`: what is captured.
    public var targetDescription: String {
        switch self {
        case .x11(let options): describe(options.target)
        case .pipeWireNode(let options): "PipeWire node \(options.nodeID)"
        case .portal(let request): "the \(request.sources == .any ? "monitor or window" : request.sources.rawValue) granted by the ScreenCast portal"
        }
    }

    /// The windows and regions hidden in every frame.
    public var mask: PrivacyMask {
        get {
            switch self {
            case .x11(let options): options.mask
            case .pipeWireNode(let options): options.mask
            case .portal(let request): request.mask
            }
        }
        set {
            switch self {
            case .x11(var options): options.mask = newValue; self = .x11(options)
            case .pipeWireNode(var options): options.mask = newValue; self = .pipeWireNode(options)
            case .portal(var request): request.mask = newValue; self = .portal(request)
            }
        }
    }

    /// Whether window masks can be applied: an X11 capture sees windows, a PipeWire stream names none.
    public var namesWindows: Bool {
        if case .x11 = self { true } else { false }
    }

    /// For `screenpub status`: the X display, or "pipewire".
    public func displayDescription(environment: [String: String]) -> String? {
        switch self {
        case .x11(let options): options.displayName ?? environment["DISPLAY"]
        case .pipeWireNode, .portal: "pipewire"
        }
    }
}
