import ArgumentParser
import Foundation
import ScreenMedia
import ScreenTesting

/// Content for benchmarks: draws on an X display, or runs a PipeWire video node, until killed.
@main
struct ScreenbenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "screenbench",
        abstract: "Draw benchmark content on an X display, or produce a PipeWire video node, until stopped.",
        discussion: """
            terminal: a full-screen terminal of text that scrolls one line every --interval seconds, \
            like `tail -f` of a busy log (every row of pixels changes).
            typing: a full-screen page of text where one line is rewritten every --interval seconds, \
            like typing in an editor (a small part changes).

            With --pipewire WIDTHxHEIGHT: starts a private PipeWire (its own runtime directory and bus) with a \
            video node that sends whole new frames at --producer-fps, as a compositor does for a playing \
            video, and prints `runtime=DIR node=ID` for the capture tools to connect to.
            """)

    enum Content: String, ExpressibleByArgument { case terminal, typing }

    @Option(help: "X display to draw on.")
    var display: String?

    @Option(help: "Run a PipeWire video node of this size (WIDTHxHEIGHT) instead of drawing on X.")
    var pipewire: String?

    @Option(help: "With --pipewire: frames per second the node sends.")
    var producerFps: Int = 30

    @Option(help: "What to draw: terminal or typing.")
    var content: Content = .terminal

    @Option(help: "Seconds between changes.")
    var interval: Double = 0.2

    func run() async throws {
        if let pipewire { return try await producePipeWire(size: pipewire) }
        guard let display else { throw ValidationError("give --display or --pipewire") }
        try draw(on: display, size: try await screenSize(of: display))
    }

    /// Draws `content` on `display` forever (blocking this thread).
    private func draw(on display: String, size: (width: Int, height: Int)) throws {
        let painter = try XPainter(displayName: display)
        let (width, height) = size
        let background = XPainter.pixel(red: 24, green: 24, blue: 32)
        let foreground = XPainter.pixel(red: 220, green: 220, blue: 210)
        let window = painter.createWindow(PixelRect(x: 0, y: 0, width: width, height: height), color: background)
        let lineHeight = 14
        let lines = height / lineHeight
        var counter = 0
        func line(_ number: Int) -> String {
            let words = ["capture", "damage", "encode", "vp9", "frame", "metadata", "relay", "subscriber", "keyframe", "pixels"]
            var text = String(format: "%06d  ", number)
            for index in 0..<24 { text += words[(number * 7 + index * 3) % words.count] + " " }
            return text
        }
        for row in 0..<lines {
            painter.drawText(window: window, line(row), x: 4, y: row * lineHeight + 11, color: foreground, background: background)
        }
        counter = lines
        painter.sync()
        while true {
            Thread.sleep(forTimeInterval: interval)
            switch content {
            case .terminal:
                painter.scrollUp(window: window, width: width, height: lines * lineHeight, by: lineHeight, background: background)
                painter.drawText(window: window, line(counter), x: 4, y: (lines - 1) * lineHeight + 11, color: foreground, background: background)
            case .typing:
                let row = counter % lines
                painter.fill(window: window, PixelRect(x: 0, y: row * lineHeight, width: width, height: lineHeight), color: background)
                painter.drawText(window: window, line(counter), x: 4, y: row * lineHeight + 11, color: foreground, background: background)
            }
            counter += 1
            painter.sync()
        }
    }

    private func producePipeWire(size: String) async throws {
        let parts = size.split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2 else { throw ValidationError("--pipewire must be WIDTHxHEIGHT, got \(size)") }
        let pipewire = try await PrivatePipeWire(busActivation: false)
        let producer = try PipeWireTestProducer(
            on: pipewire, width: parts[0], height: parts[1], color: (30, 90, 160), framesPerSecond: producerFps)
        let node = try await producer.nodeID()
        FileHandle.standardOutput.write(Data("runtime=\(pipewire.runtimeDirectory) node=\(node)\n".utf8))
        // Until killed (SIGTERM ends the process; the daemons are children of it only by name, so stop them).
        signal(SIGTERM, SIG_IGN)
        let termination = DispatchSource.makeSignalSource(signal: SIGTERM)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            termination.setEventHandler { done.resume() }
            termination.resume()
        }
        withExtendedLifetime(producer) { pipewire.stop() }
    }

    private func screenSize(of display: String) async throws -> (Int, Int) {
        let output = try await ChildProcess.run("/usr/bin/xdpyinfo", ["-display", display])
        guard let match = output.standardOutput.firstMatch(of: /dimensions:\s+(\d+)x(\d+)/),
            let width = Int(match.1), let height = Int(match.2)
        else { throw ValidationError("cannot read the size of \(display)") }
        return (width, height)
    }
}
