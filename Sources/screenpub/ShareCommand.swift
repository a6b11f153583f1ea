import ArgumentParser
import Foundation
import Logging
import ScreenCapturePipeWire
import ScreenCodec
import ScreenMedia
import ScreenService
import ScreenShare

/// `screenpub [share]`: capture, encode and publish until stopped.
struct ShareCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share",
        abstract: "Share the screen (the default command: `screenpub --fps 5` is `screenpub share --fps 5`).",
        discussion: """
            Captures the X11 root window (or one monitor, window or region) with MIT-SHM, skipping ticks on \
            which nothing changed (XDamage); on a Wayland session, what the desktop's ScreenCast portal grants \
            (once: the grant is remembered in $XDG_STATE_HOME/screenpub/portal-restore-token), as a PipeWire \
            stream, skipping what its damage metadata says is unchanged. It encodes with libaom (AV1 with screen-content tools, up to 10 fps) or libvpx (VP9 with screen tuning, above), and publishes \
            it as a screen-type stream to screenrelay, and/or records it to a WebM file whose timed metadata \
            track keeps every frame's metadata. With --codec h264 (openh264, for players that decode nothing else) \
            the recording is Matroska (.mkv), the same file with an H.264 track, as WebM cannot carry H.264.

            Where it goes: with --server, to that relay (with --token, or a new session made with the relay \
            secret from $SCREENRELAY_SECRET); with --output, to a file; with --to URL, to each (relays, files); \
            with none of these, to a relay started inside screenpub on 127.0.0.1 (--port), whose session and \
            viewer URLs are printed (its HTTP API takes $SCREENRELAY_SECRET when set, else a random secret). \
            For viewers on other machines: --host 0.0.0.0 with --tls-cert and --tls-key (browsers decode only \
            on https pages); the printed link then names this machine's address, or --public-url.

            Settings: every option can also be set in $XDG_CONFIG_HOME/screenpub/config.toml (or --config FILE) \
            as `name = value` with the option's long name (`fps = 5`, `server = "http://relay:8090"`, \
            `cursor = false`), or in the environment as SCREENPUB_NAME (SCREENPUB_FPS=5). The command line wins \
            over the environment, which wins over the file. SIGHUP reads them again: capture and encoding \
            settings (fps, bitrate, speed, threads, metadata, keepalive, cursor, display and target) take effect \
            at once, without dropping the stream; the others at the next start.

            Control: while sharing, `screenpub status|pause|resume|stop` talk to it over the control socket \
            $XDG_RUNTIME_DIR/screenpub.sock (mode 0600).

            Exit status: 0 finished (duration reached, or stopped with SIGINT/SIGTERM or `screenpub stop`: the \
            file is complete); 1 capture, encoding or writing failed after starting (what was recorded stays \
            readable); 2 could not start (no display, unknown window or monitor, bad region, output not \
            writable or already there without --overwrite, control socket in use, no PipeWire or portal); 64 \
            invalid command line (or a --window pattern matching several windows); 77 screen sharing declined in the portal's dialog; 78 invalid configuration \
            file or SCREENPUB_* variable.

            Examples:
              screenpub                                         # share $DISPLAY to a relay inside screenpub; prints the viewer link
              screenpub --fps 2 --window '*firefox*'            # one window, picked by its title or class
              screenpub --list-monitors && screenpub --monitor HDMI-1
              screenpub --output demo.webm --duration 60        # record a minute to a file
              screenpub --codec h264 --output demo.mkv          # H.264, for players that decode nothing else, in Matroska
              screenpub --server https://relay.example.org --token eyJ…   # publish to a screenrelay
              screenpub --mask-window KeePassXC --audio desktop # hide the password manager, share the sound
              screenpub status                                  # what a running share is doing
            """)

    @OptionGroup var options: ShareOptions

    func validate() throws {
        do { _ = try ShareConfiguration(options.settings, environment: .current) } catch { throw ValidationError(error.description) }
    }

    /// The share in one ServiceGroup; exits 2 if it could not start, 1 if it failed, 77 if declined.
    func run() async throws {
        if options.listWindows || options.listMonitors {
            let environment = ProcessInfo.processInfo.environment
            do {
                printNow(
                    options.listWindows
                        ? try CaptureTargets.windows(options.settings, environment: environment, json: options.json)
                        : try CaptureTargets.monitors(options.settings, environment: environment, json: options.json))
            } catch {
                throw CommandFailure(ExitStatus.cannotStart, error.message)
            }
            return
        }
        LogFormat(rawValue: options.logFormat)?.bootstrap()
        var logger = Logger(label: "screenpub")
        logger.logLevel = options.verbose ? .debug : .info
        let environment = ShareEnvironment.current
        let share = Share(
            configuration: try ShareConfiguration(options.settings, environment: environment), logger: logger,
            interactive: isatty(STDERR_FILENO) == 1,
            rereadSettings: {
                do {
                    let command = try ScreenpubMain.readShareCommand()
                    return .success(try ShareConfiguration(command.options.settings, environment: environment))
                } catch { return .failure(error as? ShareError ?? ShareError(.invalidSettings, "\(error)")) }
            },
            output: printNow)
        guard let problem = await share.runUntilStopped() else { return }
        logger.error("\(problem.message)")
        throw ExitCode(ExitStatus.of(problem.kind))
    }
}
