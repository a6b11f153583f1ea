public import ArgumentParser
import Foundation
import Logging
import ScreenCaptureX11
import ScreenCodec
import ScreenMedia
import ScreenPipeline
import ServiceLifecycle

/// Exit codes, documented in `--help` and the README.
enum ExitStatus {
    /// Capture, encoding or writing failed after starting (display lost, window closed, disk full).
    static let runtimeFailure: Int32 = 1
    /// Could not start: no display, unknown window or monitor, region outside the screen, unwritable output.
    static let cannotStart: Int32 = 2
}

@main
struct ScreenpubCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "screenpub",
        abstract: "Share a Linux screen as a low-frame-rate, damage-driven VP9/VP8 screen stream.",
        discussion: """
            Captures the X11 root window (or one monitor, window or region) with MIT-SHM, skips ticks on which \
            nothing changed (XDamage), encodes with libvpx (VP9 screen-content tuning by default) and records \
            to a WebM file whose timed metadata track keeps every frame's metadata.

            Exit status: 0 finished (duration reached, or stopped with SIGINT/SIGTERM: the file is complete); \
            1 capture, encoding or writing failed after starting (what was recorded stays readable); \
            2 could not start (no display, unknown window or monitor, bad region, output not writable or \
            already there without --overwrite); \
            64 invalid command line.
            """,
        version: "0.1.0")

    @Option(help: "Frames per second to capture (at most; unchanged ticks cost almost nothing).")
    var fps: Double = 5

    @Option(help: "X display to capture, e.g. :0 (default: $DISPLAY).")
    var display: String?

    @Option(help: "Capture one RandR monitor, numbered from 0 as in `xrandr --listmonitors`.")
    var monitor: Int?

    @Option(help: "Capture one window by id (decimal or 0x hex, as `xwininfo` prints).")
    var window: String?

    @Option(help: "Capture a rectangle of the screen: X,Y,WIDTH,HEIGHT.")
    var region: String?

    @Option(help: "Video codec: vp9 (screen-content tuning) or vp8.")
    var codec: VideoCodec = .vp9

    @Option(help: "Target bit rate in kbit/s (constant bit rate).")
    var bitrate: Int = 1500

    @Option(
        help: ArgumentHelp(
            "Per-frame metadata: 'time' (ISO-8601 capture time, the default), 'none', or a fixed text of at most 32 bytes.",
            valueName: "TEXT"))
    var metadata: String?

    @Option(help: "Record to this WebM file.")
    var output: String?

    @Flag(help: "Replace the --output file if it exists (otherwise screenpub refuses, to never lose a recording).")
    var overwrite = false

    @Option(help: "Stop after this many seconds.")
    var duration: Double?

    @Option(help: "Re-send the unchanged picture after this many idle seconds (0: never, the default for a recording, where a gap is simply idle time).")
    var keepalive: Double = 0

    @Option(help: "Encoder threads.")
    var threads: Int = 1

    @Option(help: "libvpx speed (cpu-used): VP9 5–9 (default 8), VP8 4–16 (default 12); higher is faster, coarser.")
    var speed: Int?

    @Flag(help: "Do not draw the pointer into the frames.")
    var noCursor = false

    @Flag(help: "Capture with XGetImage even when MIT-SHM is available (for comparison).")
    var noShm = false

    @Flag(name: .shortAndLong, help: "Log more detail.")
    var verbose = false

    func validate() throws {
        guard fps > 0, fps <= 120 else { throw ValidationError("--fps must be between 0 and 120, got \(fps)") }
        guard bitrate >= 50, bitrate <= 100_000 else {
            throw ValidationError("--bitrate must be between 50 and 100000 kbit/s, got \(bitrate)")
        }
        guard threads >= 1, threads <= 16 else { throw ValidationError("--threads must be between 1 and 16") }
        if let speed {
            let range = codec == .vp9 ? 5...9 : 4...16
            guard range.contains(speed) else {
                throw ValidationError("--speed for \(codec) must be between \(range.lowerBound) and \(range.upperBound)")
            }
        }
        if let duration, duration <= 0 { throw ValidationError("--duration must be positive") }
        guard keepalive >= 0 else { throw ValidationError("--keepalive must not be negative") }
        let targets = [monitor != nil, window != nil, region != nil].filter { $0 }.count
        guard targets <= 1 else { throw ValidationError("give at most one of --monitor, --window and --region") }
        if let region, PixelRect(parsing: region) == nil {
            throw ValidationError("--region must be X,Y,WIDTH,HEIGHT with non-negative numbers, got '\(region)'")
        }
        if let window, parseWindowID(window) == nil {
            throw ValidationError("--window must be a window id in decimal or 0x hex, got '\(window)'")
        }
        do { _ = try MetadataPolicy(option: metadata) } catch { throw ValidationError("--metadata: \(error)") }
        guard output != nil else {
            throw ValidationError("give --output FILE.webm (publishing to a relay comes with screenrelay)")
        }
    }

    func run() async throws {
        var logger = Logger(label: "screenpub")
        logger.logLevel = verbose ? .debug : .info
        let target: X11CaptureTarget =
            if let monitor { .monitor(monitor) } else if let window { .window(parseWindowID(window)!) } else if let region
        { .region(PixelRect(parsing: region)!) } else { .rootWindow }
        let captureOptions = X11CaptureOptions(
            displayName: display, target: target, drawsCursor: !noCursor, usesSharedMemory: !noShm)
        let encoderConfiguration = VPXEncoderConfiguration(
            codec: codec, bitrateKbps: bitrate, framesPerSecond: fps, threads: threads, speed: speed)
        let pipelineConfiguration = CapturePipeline.Configuration(
            metadata: try MetadataPolicy(option: metadata), keepaliveInterval: keepalive > 0 ? keepalive : nil,
            duration: duration)
        let outputPath = output!
        let overwrite = self.overwrite
        let fps = self.fps
        let statistics = PipelineStatistics()
        let started = StartupReport()

        let capture = CaptureService(framesPerSecond: fps, logger: logger) { [logger] stop in
            let source: XShmFrameSource
            do {
                source = try XShmFrameSource(options: captureOptions, logger: logger)
            } catch {
                started.fail(error)
                throw error
            }
            do {
                // Fail before capturing if the file cannot be created, not at the first frame.
                try probeWritable(outputPath, overwrite: overwrite)
            } catch {
                started.fail(error)
                throw error
            }
            let size = source.size
            logger.info(
                "capturing \(describe(target)) of \(source.displayName) (\(size.width)×\(size.height)) at \(fps) fps with \(source.usesSharedMemory ? "MIT-SHM" : "XGetImage"), \(encoderConfiguration.codec) \(encoderConfiguration.bitrateKbps) kbit/s → \(outputPath)"
            )
            let pipeline = CapturePipeline(
                configuration: pipelineConfiguration, encoder: VPXEncoder(configuration: encoderConfiguration),
                sinks: [RecordingSink(path: outputPath, framesPerSecond: fps)], stop: stop, statistics: statistics)
            started.succeed()
            return (source, pipeline)
        }
        let status = StatusReporter(statistics: statistics, logger: logger, interactive: isatty(STDERR_FILENO) == 1)
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: capture, successTerminationBehavior: .gracefullyShutdownGroup),
                    .init(service: status),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: Logger(label: "screenpub.services", factory: { _ in SwiftLogNoOpLogHandler() })))
        do {
            try await group.run()
        } catch {
            let reason = started.failure ?? error
            status.clearLine()
            logger.error("\(String(describing: reason))")
            throw ExitCode(started.didStart ? ExitStatus.runtimeFailure : ExitStatus.cannotStart)
        }
        status.clearLine()
        let totals = statistics.snapshot()
        logger.info(
            "wrote \(outputPath): \(totals.framesEncoded) frames (\(totals.keyframes) keyframes, \(totals.keepalives) keepalives), \(totals.bytesEncoded) bytes; \(totals.framesCaptured) changed ticks captured, \(totals.framesUnchanged) unchanged ticks skipped, \(totals.missedTicks) ticks missed"
        )
    }
}

/// Parses a window id as xwininfo prints it: decimal or 0x-prefixed hex.
func parseWindowID(_ text: String) -> UInt? {
    let value = text.lowercased().hasPrefix("0x") ? UInt(text.dropFirst(2), radix: 16) : UInt(text)
    return value.flatMap { $0 == 0 ? nil : $0 }
}

private func describe(_ target: X11CaptureTarget) -> String {
    switch target {
    case .rootWindow: "the screen"
    case .monitor(let index): "monitor \(index)"
    case .window(let id): "window 0x\(String(id, radix: 16))"
    case .region(let rect): "region \(rect)"
    }
}

/// Creates the output file to prove it can be written, refusing to replace a recording unless told to.
private func probeWritable(_ path: String, overwrite: Bool) throws {
    if !overwrite, let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size > 0 {
        throw OutputProblem("\(path) exists (\(size) bytes); pass --overwrite to replace it")
    }
    guard FileManager.default.createFile(atPath: path, contents: nil) else {
        throw OutputProblem("cannot create \(path): check that its directory exists and is writable")
    }
}

struct OutputProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension VideoCodec: ExpressibleByArgument {}
