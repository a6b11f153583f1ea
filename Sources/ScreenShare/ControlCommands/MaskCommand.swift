public import ArgumentParser
import ScreenService

/// `screenpub mask add|remove`: hides windows or a rectangle in a running share, or shows them again.
public struct MaskCommand: AsyncParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "mask",
        abstract: "Hide windows matching a pattern, or a rectangle, from now on (add), or show them again (remove), in a running share.",
        discussion: """
            A pattern is matched as --mask-window matches it: a glob against WM_CLASS and title, ignoring case (X11 \
            only: a share that captures through PipeWire refuses window patterns, as its screen cast names no \
            windows). --region X,Y,W,H is a rectangle of the captured area, on X11 and PipeWire alike. The capture \
            restarts with the change at once; the stream goes on. `screenpub status` lists the masks. A change lasts \
            until screenpub stops: to keep it, put it in the config file (mask-window = [...], mask-region = [...]); \
            a SIGHUP reload that would show something hidden now is refused.

            Exit status: 0 done; 3 no screenpub is running; 1 it refused (the reason is printed).

            Examples:
              screenpub mask add KeePassXC                 # hide the password manager's windows
              screenpub mask add --region 1600,0,320,60    # and the corner where notifications appear
              screenpub mask remove KeePassXC              # show its windows again
            """)

    @Argument(help: "add or remove.")
    var action: Action

    @Argument(help: "A glob matched against windows' WM_CLASS and titles, ignoring case (quote it in a shell).")
    var pattern: String?

    @Option(help: ArgumentHelp("The same as PATTERN.", valueName: "PATTERN"))
    var window: String?

    @Option(help: ArgumentHelp("A rectangle of the captured area instead of windows.", valueName: "X,Y,W,H"))
    var region: String?

    @OptionGroup var control: ControlOptions

    enum Action: String, ExpressibleByArgument, CaseIterable { case add, remove }

    public func validate() throws {
        guard [pattern, window, region].compactMap({ $0 }).count == 1 else {
            throw ValidationError("give one of PATTERN, --window PATTERN or --region X,Y,W,H")
        }
    }

    public func run() async throws {
        let target = region.map { "--region \($0)" } ?? (pattern ?? window).map { "--window \($0)" } ?? ""
        let (status, _) = try await control.send("mask \(action.rawValue) \(target)")
        let windows = status.maskWindows ?? [], regions = status.maskRegions ?? []
        printNow("window masks: \(windows.isEmpty ? "none" : windows.joined(separator: ", ")); regions: \(regions.isEmpty ? "none" : regions.joined(separator: "; "))")
    }
}
