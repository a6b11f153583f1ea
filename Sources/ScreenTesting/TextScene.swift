import Foundation
public import ScreenMedia

/// Screen content for benchmarks and network tests, a pure function of a step number: what is on screen after `step` changes
/// can be drawn again from nothing, which is how the quality pass makes the reference for a captured frame.
/// Every step is drawn with the server grabbed (all at once, never half drawn in a capture) and carries its
/// number in a marker: 16 blocks of 16×16 pixels at the top right, black or white, most significant bit first
/// (block-aligned and flat, so any codec keeps them readable).
public struct TextScene: Sendable {
    public enum Content: String, CaseIterable, Sendable {
        /// A full screen of static text: the marker stays at step 0.
        case idle
        /// A terminal scrolling one line per step (`tail -f` of a busy log: every row of pixels changes).
        case terminal
        /// A page of text where one line is rewritten per step (typing in an editor).
        case typing
        /// A different page of text per step (slides, switching windows).
        case pageflip
    }

    public let content: Content
    public let width: Int
    public let height: Int
    public let lineHeight = 14
    public var lines: Int { height / lineHeight }
    public static let markerBits = 16
    public static let markerBlock = 16
    public let background = XPainter.pixel(red: 24, green: 24, blue: 32)
    public let foreground = XPainter.pixel(red: 220, green: 220, blue: 210)

    private static let words = [
        "capture", "damage", "encode", "frame", "metadata", "relay", "subscriber", "keyframe", "pixels", "the", "a",
        "of", "to", "in", "is", "and", "for", "with", "on", "screen", "window", "region", "monitor", "cursor",
        "pointer", "buffer", "stream", "session", "token", "viewer", "archive", "segment", "playlist", "latency",
        "bitrate", "quantizer", "palette", "motion", "vector", "block", "tile", "row", "column", "thread", "queue",
        "socket", "error", "warning", "info", "debug", "2026-11-23T13:24:07Z", "0x7f3a", "GET", "POST", "200", "404",
        "/api/v1/sessions", "{", "}", "=>", "let", "var", "func", "return",
    ]

    /// Text line `number`: words from a fixed vocabulary picked by a hash of the number, of varied lengths
    /// (some lines empty), as in a log or source file; different numbers give unrelated lines.
    public func text(_ number: Int) -> String {
        var state = UInt64(truncatingIfNeeded: number) &* 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            state = state &+ 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int(truncatingIfNeeded: (z ^ (z >> 31)) >> 1)
        }
        let count = next() % 8 == 0 ? 0 : 3 + next() % 28
        var text = String(format: "%06d  ", number) + String(repeating: " ", count: next() % 4 * 2)
        for _ in 0..<count { text += Self.words[next() % Self.words.count] + " " }
        return text
    }

    /// The number of the text line shown in `row` after `step` changes.
    public func lineNumber(row: Int, step: Int) -> Int {
        switch content {
        case .idle: return row
        case .terminal: return step + row
        case .pageflip: return step * lines + row
        case .typing:
            // Step s (from 1) rewrote row (lines + s - 1) % lines with line lines + s - 1.
            guard step > 0 else { return row }
            let last = lines + step - 1
            let candidate = last - ((last - row) % lines + lines) % lines
            return candidate >= lines ? candidate : row
        }
    }

    private func drawLine(_ painter: XPainter, _ window: UInt, row: Int, step: Int) {
        painter.drawText(
            window: window, text(lineNumber(row: row, step: step)), x: 4, y: row * lineHeight + 11, color: foreground,
            background: background)
    }

    private func drawMarker(_ painter: XPainter, _ window: UInt, step: Int) {
        for bit in 0..<Self.markerBits {
            let on = (step >> (Self.markerBits - 1 - bit)) & 1 == 1
            painter.fill(
                window: window,
                PixelRect(x: width - (Self.markerBits - bit) * Self.markerBlock, y: 0, width: Self.markerBlock, height: Self.markerBlock),
                color: on ? XPainter.pixel(red: 255, green: 255, blue: 255) : XPainter.pixel(red: 0, green: 0, blue: 0))
        }
    }

    /// Draws step `step` from nothing.
    public func drawWhole(_ painter: XPainter, _ window: UInt, step: Int) {
        painter.atomically {
            painter.fill(window: window, PixelRect(x: 0, y: 0, width: width, height: height), color: background)
            for row in 0..<lines { drawLine(painter, window, row: row, step: step) }
            drawMarker(painter, window, step: step)
        }
    }

    /// Goes from step `step - 1` to `step` as an application would: scroll and one new line, one rewritten
    /// line, or a new page.
    public func drawChange(_ painter: XPainter, _ window: UInt, step: Int) {
        painter.atomically {
            switch content {
            case .idle:
                return
            case .terminal:
                painter.scrollUp(window: window, width: width, height: lines * lineHeight, by: lineHeight, background: background)
                drawLine(painter, window, row: lines - 1, step: step)
            case .typing:
                let row = (lines + step - 1) % lines
                painter.fill(window: window, PixelRect(x: 0, y: row * lineHeight, width: width, height: lineHeight), color: background)
                drawLine(painter, window, row: row, step: step)
            case .pageflip:
                painter.fill(window: window, PixelRect(x: 0, y: 0, width: width, height: lines * lineHeight), color: background)
                for row in 0..<lines { drawLine(painter, window, row: row, step: step) }
            }
            drawMarker(painter, window, step: step)
        }
    }

    /// The step a captured (decoded) picture shows, from its marker; nil when the marker is unreadable.
    public func step(of frame: VideoFrame) -> Int? {
        guard frame.width == width, frame.height == height else { return nil }
        var step = 0
        for bit in 0..<Self.markerBits {
            let x = width - (Self.markerBits - bit) * Self.markerBlock + Self.markerBlock / 2
            let pixel = frame.pixel(x: x, y: Self.markerBlock / 2)
            let luma = (Int(pixel.r) + Int(pixel.g) + Int(pixel.b)) / 3
            guard luma < 64 || luma > 192 else { return nil }
            step = step << 1 | (luma > 192 ? 1 : 0)
        }
        return step
    }

    public init(content: Content, width: Int, height: Int) {
        self.content = content
        self.width = width
        self.height = height
    }
}

/// Draws a ``TextScene`` on an X display from a thread of its own (an X connection belongs to one thread): the
/// whole scene first, then a change every `interval` seconds, until ``stop()``.
public final class TextSceneDriver: Sendable {
    private let stopped = Locked(false)
    private let finished = OneShotEvent()
    /// Changes drawn so far.
    public var steps: Int { counter.value }
    private let counter = Locked(0)

    public init(_ scene: TextScene, display: String, interval: Double) throws {
        let opened = Locked<(any Error)??>(nil)
        let ready = DispatchSemaphore(value: 0)
        let thread = Thread { [stopped, finished, counter] in
            defer { finished.signal() }
            let painter: XPainter
            do {
                painter = try XPainter(displayName: display)
                opened.withLock { $0 = .some(nil) }
                ready.signal()
            } catch {
                opened.withLock { $0 = .some(error) }
                ready.signal()
                return
            }
            let window = painter.createWindow(PixelRect(x: 0, y: 0, width: scene.width, height: scene.height), color: scene.background)
            scene.drawWhole(painter, window, step: 0)
            var step = 0
            while !stopped.value {
                Thread.sleep(forTimeInterval: interval)
                guard scene.content != .idle else { continue }
                step += 1
                scene.drawChange(painter, window, step: step)
                counter.withLock { $0 = step }
            }
            painter.destroy(window: window)
            painter.sync()
        }
        thread.start()
        ready.wait()
        if case .some(.some(let error)) = opened.value { throw error }
    }

    /// Stops drawing; returns once the thread has let its connection go.
    public func stop() async {
        stopped.withLock { $0 = true }
        await finished.wait()
    }
}
