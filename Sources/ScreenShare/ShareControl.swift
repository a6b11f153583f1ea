public import ScreenMedia

/// What `screenpub status|pause|resume|stop` and a SIGHUP reload do to a running share, as a pure state
/// machine: it is handed a command and answers with effects for the share to carry out. No sockets, no
/// threads: tests drive it directly.
public struct ShareControl: Sendable {
    public enum Command: Sendable, Equatable {
        case status, pause, resume, stop
        /// Stop and restart the sound alone (the picture goes on).
        case mute, unmute
        /// The settings read again (SIGHUP), or why they could not be.
        case reload(Result<ShareConfiguration, ShareError>)
        /// `mask add|remove PATTERN` (or `--window PATTERN`): hide windows matching PATTERN from now on, or no
        /// longer; `mask add|remove --region X,Y,W,H`: the same for a rectangle of the captured area.
        case mask(add: Bool, MaskTarget)
        /// A control socket command screenpub does not know.
        case unknown(String)

        /// A control socket command by its name (and, for `mask`, its words).
        public init(_ name: String) {
            let words = name.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            if words.first == "mask" {
                if words.count == 3, words[1] == "add" || words[1] == "remove" {
                    let argument = String(words[2])
                    let target: MaskTarget =
                        if argument.hasPrefix("--region ") {
                            .region(String(argument.dropFirst("--region ".count)))
                        } else if argument.hasPrefix("--window ") {
                            .window(String(argument.dropFirst("--window ".count)))
                        } else {
                            .window(argument)
                        }
                    self = .mask(add: words[1] == "add", target)
                } else {
                    self = .unknown(name)
                }
                return
            }
            switch name {
            case "status": self = .status
            case "pause": self = .pause
            case "resume": self = .resume
            case "stop": self = .stop
            case "mute": self = .mute
            case "unmute": self = .unmute
            default: self = .unknown(name)
            }
        }
    }

    /// What a `mask` command hides or shows again: windows by a pattern, or a rectangle (`X,Y,W,H`), as given.
    public enum MaskTarget: Sendable, Equatable {
        case window(String)
        case region(String)
    }

    public enum Effect: Sendable, Equatable {
        /// Stop (true) or restart (false) encoding; the first frame after a pause is a keyframe.
        case setPaused(Bool)
        /// Stop (true) or restart (false) sending sound.
        case setMuted(Bool)
        /// Tell every destination (viewers see a paused badge, or the new frame rate).
        case announce(StreamAnnouncement)
        /// Capture with these settings from now on: the capture restarts, the stream goes on.
        case restartCapture(CaptureSettings)
        /// End the share cleanly (the stream is ended, files finished).
        case stopShare
        case log(LogLevel, String)
        /// Answer the control socket with the share's status, or with a refusal.
        case reply(Reply)
    }

    public enum LogLevel: Sendable, Equatable { case info, warning, error }

    public enum Reply: Sendable, Equatable {
        case status
        case refused(String)
    }

    public enum State: String, Sendable, Equatable {
        case sharing, paused, stopping
    }

    public private(set) var state = State.sharing
    /// The sound is muted (independent of pausing, which silences it too).
    public private(set) var muted = false
    /// The share carries sound (`--audio`, and it could be captured).
    public private(set) var hasAudio: Bool
    /// The capture settings in force (a reload changes them).
    public private(set) var capture: CaptureSettings
    private let startupSettings: StartupSettings

    public init(configuration: ShareConfiguration) {
        capture = configuration.capture
        startupSettings = configuration.startupSettings
        hasAudio = configuration.audio != nil
    }

    /// The sound could not be captured (`--audio-optional`): the share goes on without it.
    public mutating func audioUnavailable() { hasAudio = false }

    public mutating func handle(_ command: Command) -> [Effect] {
        switch (command, state) {
        case (.status, _):
            return [.reply(.status)]
        case (.unknown(let name), _):
            return [.reply(.refused("unknown command '\(name)' (status, pause, resume, mute, unmute, stop, mask add|remove PATTERN or --region X,Y,W,H)"))]
        case (.mask, .stopping):
            return [.reply(.refused("screenpub is stopping"))]
        case (.mask(let add, let target), _):
            return changeMask(add: add, target)
        case (.mute, .stopping), (.unmute, .stopping):
            return [.reply(.refused("screenpub is stopping"))]
        case (.mute, _) where !hasAudio, (.unmute, _) where !hasAudio:
            return [.reply(.refused("this share has no sound to mute: start it with --audio desktop, mic or a PipeWire node"))]
        case (.mute, _):
            guard !muted else { return [.reply(.status)] }
            muted = true
            return [.setMuted(true), .announce(announcement), .log(.info, "muted: no sound is sent until `screenpub unmute`"), .reply(.status)]
        case (.unmute, _):
            guard muted else { return [.reply(.status)] }
            muted = false
            return [.setMuted(false), .announce(announcement), .log(.info, "unmuted"), .reply(.status)]
        case (.pause, .stopping), (.resume, .stopping):
            return [.reply(.refused("screenpub is stopping"))]
        case (.pause, .paused), (.resume, .sharing):
            return [.reply(.status)]
        case (.pause, .sharing):
            state = .paused
            return [
                .setPaused(true), .announce(announcement), .log(.info, "paused: no video is sent until `screenpub resume`"), .reply(.status),
            ]
        case (.resume, .paused):
            state = .sharing
            return [.setPaused(false), .announce(announcement), .log(.info, "resumed"), .reply(.status)]
        case (.stop, .stopping):
            return [.reply(.status)]
        case (.stop, _):
            state = .stopping
            return [.log(.info, "stopping (screenpub stop)"), .reply(.status), .stopShare]
        case (.reload, .stopping):
            return []
        case (.reload(.failure(let error)), _):
            return [.log(.error, "SIGHUP: the settings were not changed: \(error)")]
        case (.reload(.success(let next)), _):
            return reload(next)
        }
    }

    /// Adds or removes a window pattern or a region: the capture restarts with it, the stream goes on. Window
    /// patterns are refused for a capture that names no windows (PipeWire), as `--mask-window` is at start.
    private mutating func changeMask(add: Bool, _ target: MaskTarget) -> [Effect] {
        var mask = capture.source.mask
        let what: String
        switch target {
        case .window(let text):
            guard capture.source.namesWindows else {
                return [.reply(.refused(
                    "window masks cannot be applied to this share: it captures through PipeWire, whose screen cast names no windows, so nothing would be hidden. Hide an area instead: screenpub mask add --region X,Y,W,H"))]
            }
            let pattern: WindowPattern
            do { pattern = try WindowPattern(text) } catch { return [.reply(.refused(error.description))] }
            guard let changed = mask.windowPatterns.adding(pattern, add) else {
                return add ? [.reply(.status)] : [.reply(.refused("no window mask \"\(text)\" (masks: \(Self.list(mask.windowPatterns.map(\.text))))"))]
            }
            mask.windowPatterns = changed
            what = "windows matching \"\(pattern)\" are"
        case .region(let text):
            let region: PixelRect
            do { region = try PixelRect(maskRegion: text) } catch { return [.reply(.refused(error.description))] }
            guard let changed = mask.regions.adding(region, add) else {
                return add ? [.reply(.status)] : [.reply(.refused("no mask region \(text) (regions: \(Self.list(mask.regions.map(\.description))))"))]
            }
            mask.regions = changed
            what = "region \(region) is"
        }
        capture.source.mask = mask
        return [.restartCapture(capture), .log(.info, add ? "\(what) hidden from now on" : "\(what) shown again"), .reply(.status)]
    }

    private static func list(_ items: [String]) -> String { items.isEmpty ? "none" : items.joined(separator: ", ") }

    /// What the destinations announce now.
    public var announcement: StreamAnnouncement {
        StreamAnnouncement(hasVideo: state != .paused, framesPerSecond: capture.framesPerSecond, hasAudio: hasAudio && !muted && state != .paused)
    }

    private mutating func reload(_ configuration: ShareConfiguration) -> [Effect] {
        // What is hidden stays hidden unless someone asks to show it (`screenpub mask remove`): a configuration
        // that lost a mask, or a mask added while running, must not uncover it silently.
        let exposed = capture.source.mask.exposures(goingTo: configuration.capture.source.mask)
        guard exposed.isEmpty else {
            return [.log(
                .error,
                "SIGHUP: the settings were not changed: they would show \(exposed.joined(separator: ", ")), hidden now. Add the masks to the configuration, or show them on purpose first (screenpub mask remove PATTERN, or --region X,Y,W,H)")]
        }
        var effects: [Effect] = []
        for option in startupSettings.changedOptions(in: configuration.startupSettings) {
            effects.append(.log(.warning, "SIGHUP: \(option) changed; it takes effect at the next start"))
        }
        var next = configuration.capture
        // The codec of a running stream (and of a recording) stays (see the warning above), and with it the
        // speed, whose range is the codec's, and the chroma format (another would restart every viewer's decoder
        // and every recording's track with a keyframe of another profile).
        if next.codec != capture.codec || next.encoder.codec != capture.encoder.codec {
            (next.codec, next.encoder.codec) = (capture.codec, capture.encoder.codec)
            next.encoder.speed = capture.encoder.speed
        }
        next.encoder.chroma = capture.encoder.chroma
        guard next != capture else { return effects + [.log(.info, "SIGHUP: the capture settings are unchanged")] }
        let rateChanged = next.framesPerSecond != capture.framesPerSecond
        capture = next
        effects.append(.log(.info, "SIGHUP: restarting the capture with the new settings (\(next.framesPerSecond) fps, \(next.encoder.bitrateKbps) kbit/s)"))
        if rateChanged { effects.append(.announce(announcement)) }
        effects.append(.restartCapture(next))
        return effects
    }
}

extension Array where Element: Equatable {
    /// With `element` added (`add`) or removed; nil when that changes nothing.
    fileprivate func adding(_ element: Element, _ add: Bool) -> [Element]? {
        if add { return contains(element) ? nil : self + [element] }
        return firstIndex(of: element).map { index in var copy = self; copy.remove(at: index); return copy }
    }
}
