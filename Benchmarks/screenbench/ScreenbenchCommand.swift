public import ArgumentParser
import Foundation
import ScreenMedia
public import ScreenTesting

extension TextScene.Content: ExpressibleByArgument {}

/// Content for benchmarks: draws on an X display, or runs a PipeWire video node, until killed.
@main
struct ScreenbenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "screenbench",
        abstract: "Draw benchmark content on an X display, or produce a PipeWire video node, until stopped.",
        discussion: """
            Content (each change is one numbered step, drawn at once, with its number in a marker at the top \
            right): idle, a full screen of static text; terminal, a terminal that scrolls one line per step \
            (`tail -f` of a busy log: every row of pixels changes); typing, a page where one line is rewritten \
            per step (an editor); pageflip, a new page of text per step (slides, switching windows).

            With --quality FILE: draws, for each frame of the WebM FILE (a capture of this content on a display \
            of the same size), the step its marker names, and prints the SSIM of the decoded frames against those \
            pictures as ffmpeg's ssim filter measures it, each frame weighted by how long it is shown (the last one until \
            --duration): `ssim=ALL ssim_y=Y frames=N unreadable=M`.

            With --pipewire WIDTHxHEIGHT: starts a private PipeWire (its own runtime directory and bus) with a \
            video node that sends whole new frames at --producer-fps, as a compositor does for a playing \
            video, and prints `runtime=DIR node=ID` for the capture tools to connect to.

            With --mutter WIDTHxHEIGHT: the same for GNOME's compositor, mutter, headless on a private PipeWire: a \
            fullscreen window with a ticking clock (a 16×16 block moving once a second), recorded through \
            mutter's ScreenCast API with the pointer embedded; with --moving-pointer, mutter's virtual pointer \
            circles 20 times a second. Prints `runtime=DIR node=ID`.
            """)

    @Option(help: "X display to draw on.")
    var display: String?

    @Option(help: "Run a PipeWire video node of this size (WIDTHxHEIGHT) instead of drawing on X.")
    var pipewire: String?

    @Option(help: "Run GNOME's mutter headless with a monitor of this size (WIDTHxHEIGHT) and record it.")
    var mutter: String?

    @Flag(help: "With --mutter: move the pointer all the time.")
    var movingPointer = false

    @Option(help: "With --pipewire: frames per second the node sends.")
    var producerFps: Int = 30

    @Option(help: "What to draw: idle, terminal, typing, pageflip or colour (coloured code, text and buttons).")
    var content: TextScene.Content = .terminal

    @Option(help: "Seconds between changes.")
    var interval: Double = 0.2

    @Option(help: "Append the monotonic time (nanoseconds, CLOCK_MONOTONIC) at which each change was on the screen to this file, a line each: what a viewer's frames can be timed from, change → arrival.")
    var changesLog: String?

    @Option(help: "Measure the quality of this WebM capture of the content instead of drawing it live.")
    var quality: String?

    @Option(help: "With --quality: seconds the capture covers (its last frame counts until then).")
    var duration: Double = 20

    @Flag(help: "With --quality: print each frame's time, step and SSIM on standard error.")
    var printFrames = false

    @Flag(help: "With --quality: compare in 4:4:4 (colour planes at full resolution), so that what 4:2:0 loses counts.")
    var fullColour = false

    func run() async throws {
        if let pipewire { return try await producePipeWire(size: pipewire) }
        if let mutter { return try await castMutter(size: mutter) }
        guard let display else { throw ValidationError("give --display or --pipewire") }
        let (width, height) = try await screenSize(of: display)
        let scene = TextScene(content: content, width: width, height: height)
        if let quality {
            let result = try await QualityPass(
                scene: scene, display: display, recording: quality, duration: duration, printsFrames: printFrames, fullColour: fullColour
            ).run()
            print(result)
            return
        }
        try draw(scene, on: display)
    }

    /// Draws the scene's steps on `display` forever (blocking this thread).
    private func draw(_ scene: TextScene, on display: String) throws {
        let painter = try XPainter(displayName: display)
        let log = try changesLog.map { path in
            guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
                throw ValidationError("cannot write --changes-log \(path)")
            }
            return handle
        }
        let clock = MonotonicClock()
        func logged(_ draw: () -> Void) {
            draw()
            log?.write(Data("\(clock.nanoseconds(fromTicks: clock.now()))\n".utf8))
        }
        let window = painter.createWindow(PixelRect(x: 0, y: 0, width: scene.width, height: scene.height), color: scene.background)
        logged { scene.drawWhole(painter, window, step: 0) }
        guard scene.content != .idle else {
            while true { Thread.sleep(forTimeInterval: 3600) }
        }
        var step = 0
        while true {
            Thread.sleep(forTimeInterval: interval)
            step += 1
            logged { scene.drawChange(painter, window, step: step) }
        }
    }

    private func producePipeWire(size: String) async throws {
        let (width, height) = try Self.size(size, of: "--pipewire")
        let pipewire = try await PrivatePipeWire(busActivation: false)
        let producer = try PipeWireTestProducer(
            on: pipewire, width: width, height: height, color: (30, 90, 160), framesPerSecond: producerFps)
        let node = try await producer.nodeID()
        FileHandle.standardOutput.write(Data("runtime=\(pipewire.runtimeDirectory) node=\(node)\n".utf8))
        await Self.untilTerminated()
        withExtendedLifetime(producer) { pipewire.stop() }
    }

    private func castMutter(size: String) async throws {
        let (width, height) = try Self.size(size, of: "--mutter")
        let mutter = try await HeadlessMutter(width: width, height: height)
        try await mutter.showTestWindow(clock: true)
        let cast = try await mutter.screenCast(cursorMode: .embedded)
        FileHandle.standardOutput.write(Data("runtime=\(mutter.pipewire.runtimeDirectory) node=\(cast.nodeID)\n".utf8))
        let pointer = Task { [movingPointer] in
            var angle = 0.0
            while movingPointer && !Task.isCancelled {
                angle += 0.15
                let radius = Double(min(width, height)) / 3
                try? await cast.movePointer(x: Double(width) / 2 + radius * cos(angle), y: Double(height) / 2 + radius * sin(angle))
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        await Self.untilTerminated()
        pointer.cancel()
        withExtendedLifetime(cast) { mutter.stop() }
    }

    private static func size(_ text: String, of option: String) throws -> (Int, Int) {
        let parts = text.split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2 else { throw ValidationError("\(option) must be WIDTHxHEIGHT, got \(text)") }
        return (parts[0], parts[1])
    }

    /// Until SIGTERM (which then does not end the process: the daemons it started are to be stopped first).
    private static func untilTerminated() async {
        signal(SIGTERM, SIG_IGN)
        let termination = DispatchSource.makeSignalSource(signal: SIGTERM)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            termination.setEventHandler { done.resume() }
            termination.resume()
        }
    }

    private func screenSize(of display: String) async throws -> (Int, Int) {
        let output = try await ChildProcess.run("/usr/bin/xdpyinfo", ["-display", display])
        guard let match = output.standardOutput.firstMatch(of: /dimensions:\s+(\d+)x(\d+)/),
            let width = Int(match.1), let height = Int(match.2)
        else { throw ValidationError("cannot read the size of \(display)") }
        return (width, height)
    }
}
