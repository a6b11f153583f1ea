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
        /// Coloured text, a line rewritten per step (as `typing`): syntax-highlighted code on a dark background
        /// (left half), red, green, blue and black words on a light one (right half), under a bar of coloured
        /// buttons and links. Its strokes are 1 pixel wide and coloured: what 4:2:0 smears.
        case colour
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
        case .typing, .colour:
            // Step s (from 1) rewrote row (lines + s - 1) % lines with line lines + s - 1.
            guard step > 0 else { return row }
            let last = lines + step - 1
            let candidate = last - ((last - row) % lines + lines) % lines
            return candidate >= lines ? candidate : row
        }
    }

    private func drawLine(_ painter: XPainter, _ window: UInt, row: Int, step: Int) {
        if content == .colour {
            drawColouredLine(painter, window, row: row, step: step)
            return
        }
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
            if content == .colour { drawColouredPage(painter, window) }
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
            case .colour:
                drawLine(painter, window, row: (lines + step - 1) % lines, step: step)
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

// MARK: Coloured text

extension TextScene {
    /// Rows taken by the bar of buttons and links at the top of the coloured scene.
    static let colouredBarRows = 2
    /// The X server's built-in `fixed` font: 6 pixels a character.
    static let characterWidth = 6
    static let lightBackground = XPainter.pixel(red: 250, green: 250, blue: 246)

    /// The coloured scene's background halves and its bar: coloured buttons with white labels, blue underlined links.
    private func drawColouredPage(_ painter: XPainter, _ window: UInt) {
        painter.fill(window: window, PixelRect(x: width / 2, y: 0, width: width - width / 2, height: height), color: Self.lightBackground)
        let barHeight = Self.colouredBarRows * lineHeight
        painter.fill(window: window, PixelRect(x: 0, y: 0, width: width, height: barHeight), color: XPainter.pixel(red: 45, green: 45, blue: 60))
        let buttons: [(String, UInt)] = [
            ("Deploy", XPainter.pixel(red: 40, green: 160, blue: 70)), ("Cancel", XPainter.pixel(red: 220, green: 50, blue: 47)),
            ("Share", XPainter.pixel(red: 38, green: 110, blue: 220)), ("Warn", XPainter.pixel(red: 240, green: 150, blue: 20)),
            ("Record", XPainter.pixel(red: 140, green: 70, blue: 200)),
        ]
        var x = 8
        for (label, colour) in buttons where x + 80 < width / 2 {
            painter.fill(window: window, PixelRect(x: x, y: 4, width: 72, height: barHeight - 8), color: colour)
            painter.drawText(window: window, label, x: x + 8, y: barHeight - 9, color: XPainter.pixel(red: 255, green: 255, blue: 255), background: colour)
            x += 84
        }
        let link = XPainter.pixel(red: 0, green: 0, blue: 238)
        x = width / 2 + 8
        for label in ["docs/performance.md", "issues", "screenrelay.example.org"] {
            let end = x + label.count * Self.characterWidth
            guard end < width - Self.markerBits * Self.markerBlock - 8 else { break }
            painter.fill(window: window, PixelRect(x: x - 4, y: 4, width: end - x + 8, height: barHeight - 8), color: Self.lightBackground)
            painter.drawText(window: window, label, x: x, y: barHeight - 9, color: link, background: Self.lightBackground)
            painter.fill(window: window, PixelRect(x: x, y: barHeight - 7, width: end - x, height: 1), color: link)
            x = end + 16
        }
    }

    /// A row of the coloured scene: code with its words coloured by kind on the left, red, green, blue and black
    /// words on the right (another line of the same vocabulary).
    private func drawColouredLine(_ painter: XPainter, _ window: UInt, row: Int, step: Int) {
        guard row >= Self.colouredBarRows else { return }
        let y = row * lineHeight
        let number = lineNumber(row: row, step: step)
        painter.fill(window: window, PixelRect(x: 0, y: y, width: width / 2, height: lineHeight), color: background)
        painter.fill(window: window, PixelRect(x: width / 2, y: y, width: width - width / 2, height: lineHeight), color: Self.lightBackground)
        drawWords(painter, window, text(number), from: 4, to: width / 2 - 8, y: y + 11, background: background) { word, index in
            index == 0 ? XPainter.pixel(red: 92, green: 99, blue: 112) : Self.syntaxColour(word)
        }
        let inks = [
            XPainter.pixel(red: 200, green: 30, blue: 30), XPainter.pixel(red: 20, green: 140, blue: 40),
            XPainter.pixel(red: 30, green: 60, blue: 220), XPainter.pixel(red: 30, green: 30, blue: 30),
        ]
        drawWords(painter, window, text(number + 1_000_003), from: width / 2 + 4, to: width - 4, y: y + 11, background: Self.lightBackground) { _, index in
            inks[(index + number) % inks.count]
        }
    }

    private func drawWords(
        _ painter: XPainter, _ window: UInt, _ line: String, from start: Int, to end: Int, y: Int, background: UInt,
        colour: (Substring, Int) -> UInt
    ) {
        var x = start
        for (index, word) in line.split(separator: " ").enumerated() {
            let advance = (word.count + 1) * Self.characterWidth
            guard x + word.count * Self.characterWidth <= end else { break }
            painter.drawText(window: window, String(word), x: x, y: y, color: colour(word, index), background: background)
            x += advance
        }
    }

    /// A one-dark-like highlighting: keywords purple, numbers orange, paths green, errors red, punctuation cyan.
    static func syntaxColour(_ word: Substring) -> UInt {
        switch word {
        case "let", "var", "func", "return", "for", "in", "GET", "POST": XPainter.pixel(red: 198, green: 120, blue: 221)
        case "error", "warning", "404": XPainter.pixel(red: 224, green: 108, blue: 117)
        case "{", "}", "=>": XPainter.pixel(red: 86, green: 182, blue: 194)
        default:
            if word.first == "/" { XPainter.pixel(red: 152, green: 195, blue: 121) }
            else if word.first?.isNumber == true { XPainter.pixel(red: 209, green: 154, blue: 102) }
            else { XPainter.pixel(red: 171, green: 178, blue: 191) }
        }
    }
}
