import Foundation
import ScreenCodec
import ScreenMedia
import ScreenRecording
import ScreenTesting

/// The SSIM of a recording of a ``TextScene`` against what was drawn: each decoded frame is paired with the
/// step its marker names, drawn again on the display and read back, and ffmpeg's `ssim` filter compares the
/// two sequences (both converted to 4:2:0 by the same swscale, as an encoder would see them). Each frame's SSIM
/// counts for as long as the frame is on screen (until the next one, the last until `duration`): what a viewer
/// sees, whether the tool sends a frame per tick or only when something changed. Frames go to
/// ffmpeg through two FIFOs, one writer thread each (the decoder's, and the X client's that draws references),
/// so nothing the size of a recording is stored.
struct QualityPass {
    let scene: TextScene
    let display: String
    let recording: String
    /// Seconds the recording covers (the last frame is shown until then).
    let duration: Double
    /// Print each frame's time, step and SSIM on standard error.
    var printsFrames = false

    struct Result: CustomStringConvertible {
        var ssim: Double?
        var ssimY: Double?
        var frames: Int
        var unreadable: Int
        var description: String {
            "ssim=\(ssim.map { String(format: "%.5f", $0) } ?? "nan") ssim_y=\(ssimY.map { String(format: "%.5f", $0) } ?? "nan") frames=\(frames) unreadable=\(unreadable)"
        }
    }

    func run() async throws -> Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("quality-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let decodedPath = directory + "/decoded", referencePath = directory + "/reference", statsPath = directory + "/ssim.log"
        guard mkfifo(decodedPath, 0o600) == 0, mkfifo(referencePath, 0o600) == 0 else {
            throw BenchFailure("cannot make FIFOs in \(directory)")
        }
        signal(SIGPIPE, SIG_IGN)
        let size = "\(scene.width)x\(scene.height)"
        let raw = ["-f", "rawvideo", "-pix_fmt", "bgra", "-s", size, "-i"]
        let ffmpeg = Task {
            try await ChildProcess.run(
                "/usr/bin/ffmpeg",
                ["-nostdin", "-hide_banner"] + raw + [decodedPath] + raw + [referencePath]
                    + ["-lavfi", "[0:v]format=yuv420p[a];[1:v]format=yuv420p[b];[a][b]ssim=stats_file=\(statsPath)", "-f", "null", "-"],
                timeout: 3600)
        }
        let steps = StepQueue()
        let counts = Locked((frames: 0, unreadable: 0, failure: String?.none, times: [Double](), steps: [Int]()))
        let (scene, display, recording) = (scene, display, recording)
        let decoding = Thread {
            defer { steps.finish() }
            do {
                let output = try FIFOWriter(path: decodedPath)
                let reader = try WebMReader(path: recording)
                let decoder = try makeVideoDecoder(for: reader.codec)
                while let frame = try reader.nextFrame() {
                    try frame.payload.withUnsafeBytes { payload in
                        try decoder.decode(payload) { picture in
                            guard let step = scene.step(of: picture) else {
                                counts.withLock { $0.unreadable += 1 }
                                return
                            }
                            try output.write(picture)
                            counts.withLock {
                                $0.frames += 1
                                $0.times.append(frame.timestamp.seconds)
                                $0.steps.append(step)
                            }
                            steps.push(step)
                        }
                    }
                }
            } catch {
                counts.withLock { $0.failure = "\(error)" }
            }
        }
        let drawing = Thread {
            do {
                let output = try FIFOWriter(path: referencePath)
                let painter = try XPainter(displayName: display)
                let bounds = PixelRect(x: 0, y: 0, width: scene.width, height: scene.height)
                let window = painter.createWindow(bounds, color: scene.background)
                let reference = VideoFrame(width: scene.width, height: scene.height)
                var drawn: Int?
                while let step = steps.pop() {
                    if step != drawn {
                        scene.drawWhole(painter, window, step: step)
                        try painter.read(window: window, bounds, into: reference)
                        drawn = step
                    }
                    try output.write(reference)
                }
                painter.destroy(window: window)
            } catch {
                counts.withLock { $0.failure = "\(error)" }
                while steps.pop() != nil {}
            }
        }
        decoding.start()
        drawing.start()
        _ = try await ffmpeg.value
        let final = counts.value
        if let failure = final.failure { throw BenchFailure(failure) }
        // Per frame: "n:1 Y:0.998 U:0.991 V:0.990 All:0.996 (24.0)".
        let perFrame = ((try? String(contentsOfFile: statsPath, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { line in
            line.firstMatch(of: /Y:([0-9.]+).*All:([0-9.]+)/).flatMap { match in Double(match.2).flatMap { all in Double(match.1).map { (all, $0) } } }
        }
        guard !perFrame.isEmpty, perFrame.count == final.times.count else {
            return Result(ssim: nil, ssimY: nil, frames: final.frames, unreadable: final.unreadable)
        }
        var weighted = (all: 0.0, luma: 0.0, time: 0.0)
        for (index, value) in perFrame.enumerated() {
            let end = index + 1 < final.times.count ? final.times[index + 1] : max(duration, final.times[index])
            let shown = max(end - final.times[index], 0.001)
            weighted = (weighted.all + value.0 * shown, weighted.luma + value.1 * shown, weighted.time + shown)
            if printsFrames {
                FileHandle.standardError.write(Data(String(
                    format: "frame %d t=%.3f shown=%.3f step=%d ssim=%.5f y=%.5f\n", index, final.times[index], shown,
                    final.steps[index], value.0, value.1).utf8))
            }
        }
        return Result(
            ssim: weighted.all / weighted.time, ssimY: weighted.luma / weighted.time, frames: final.frames,
            unreadable: final.unreadable)
    }
}

/// Steps handed from the decoding thread to the drawing thread, in order.
private final class StepQueue: Sendable {
    private let state = Locked((steps: [Int](), finished: false))
    private let condition = NSCondition()

    func push(_ step: Int) {
        condition.lock()
        state.withLock { $0.steps.append(step) }
        condition.signal()
        condition.unlock()
    }

    func finish() {
        condition.lock()
        state.withLock { $0.finished = true }
        condition.broadcast()
        condition.unlock()
    }

    /// The next step, waiting for it; nil once the decoder has finished and every step was taken.
    func pop() -> Int? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            let next: Int?? = state.withLock { state in
                if !state.steps.isEmpty { return state.steps.removeFirst() }
                return state.finished ? .some(nil) : nil
            }
            if let next { return next }
            condition.wait()
        }
    }
}

/// Writes BGRA frames, tightly packed, to a FIFO (opening it waits for its reader).
private final class FIFOWriter {
    private let descriptor: Int32

    init(path: String) throws {
        descriptor = open(path, O_WRONLY)
        guard descriptor >= 0 else { throw BenchFailure("cannot open \(path)") }
    }

    deinit { close(descriptor) }

    func write(_ frame: VideoFrame) throws {
        try frame.withUnsafeBytes { pixels in
            for row in 0..<frame.height {
                var remaining = frame.width * 4
                var pointer = pixels.baseAddress! + row * frame.bytesPerRow
                while remaining > 0 {
                    let written = Foundation.write(descriptor, pointer, remaining)
                    guard written > 0 else { throw BenchFailure("ffmpeg stopped reading") }
                    remaining -= written
                    pointer += written
                }
            }
        }
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
