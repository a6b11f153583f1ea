import Foundation
import ScreenCodec
import ScreenMedia
import ScreenRecording
import ScreenTesting

/// The SSIM of a recording of a ``TextScene`` against what was drawn: each decoded frame is paired with the
/// step its marker names, drawn again on the display and read back, and ffmpeg's `ssim` filter compares the
/// two sequences (both converted to 4:2:0 by the same swscale, as an encoder would see them). Each frame's SSIM
/// counts for as long as the frame is on screen (until the next one, the last until `duration`): what a viewer
/// sees, whether the tool sends a frame per tick or only when something changed. With `fullColour` both are
/// compared in 4:4:4 instead, so that what 4:2:0 loses in the colour planes counts; beside SSIM (of Y, U, V and
/// all) it reports PSNR of U and V, which sees thin coloured strokes that SSIM's windows average away. Frames go to
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
    /// Compare in 4:4:4 (the colour planes at full resolution) rather than as a 4:2:0 encoder sees them.
    var fullColour = false

    /// Time-weighted means over the frames.
    struct Result: CustomStringConvertible {
        var ssim: Double?
        var ssimY: Double?
        var ssimU: Double?
        var ssimV: Double?
        /// dB; a frame identical to its reference counts as ``QualityPass/identicalPSNR``.
        var psnrU: Double?
        var psnrV: Double?
        var frames: Int
        var unreadable: Int
        var description: String {
            func text(_ value: Double?, _ format: String = "%.5f") -> String { value.map { String(format: format, $0) } ?? "nan" }
            return "ssim=\(text(ssim)) ssim_y=\(text(ssimY)) ssim_u=\(text(ssimU)) ssim_v=\(text(ssimV)) psnr_u=\(text(psnrU, "%.2f")) psnr_v=\(text(psnrV, "%.2f")) frames=\(frames) unreadable=\(unreadable)"
        }
    }

    static let identicalPSNR = 60.0

    func run() async throws -> Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("quality-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let decodedPath = directory + "/decoded", referencePath = directory + "/reference", statsPath = directory + "/ssim.log"
        let psnrPath = directory + "/psnr.log"
        guard mkfifo(decodedPath, 0o600) == 0, mkfifo(referencePath, 0o600) == 0 else {
            throw BenchFailure("cannot make FIFOs in \(directory)")
        }
        signal(SIGPIPE, SIG_IGN)
        let size = "\(scene.width)x\(scene.height)"
        let raw = ["-f", "rawvideo", "-pix_fmt", "bgra", "-s", size, "-i"]
        let format = fullColour ? "yuv444p" : "yuv420p"
        let ffmpeg = Task {
            try await ChildProcess.run(
                "/usr/bin/ffmpeg",
                ["-nostdin", "-hide_banner"] + raw + [decodedPath] + raw + [referencePath]
                    + ["-lavfi", "[0:v]format=\(format)[a];[1:v]format=\(format),split[b][c];[a][b]ssim=stats_file=\(statsPath)[s];[s][c]psnr=stats_file=\(psnrPath)", "-f", "null", "-"],
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
        // Per frame: "n:1 Y:0.998 U:0.991 V:0.990 All:0.996 (24.0)" and "n:1 mse_avg:… psnr_u:41.2 psnr_v:40.9".
        let ssims = ((try? String(contentsOfFile: statsPath, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { line -> [Double]? in
            guard let match = line.firstMatch(of: /Y:([0-9.]+) U:([0-9.]+) V:([0-9.]+) All:([0-9.]+)/) else { return nil }
            let values = [match.4, match.1, match.2, match.3].compactMap { Double($0) }
            return values.count == 4 ? values : nil
        }
        let psnrs = ((try? String(contentsOfFile: psnrPath, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { line -> [Double]? in
            guard let match = line.firstMatch(of: /psnr_u:([0-9.inf]+) psnr_v:([0-9.inf]+)/) else { return nil }
            return [match.1, match.2].map { Double($0).map { min($0, Self.identicalPSNR) } ?? Self.identicalPSNR }
        }
        guard !ssims.isEmpty, ssims.count == final.times.count, psnrs.count == ssims.count else {
            return Result(frames: final.frames, unreadable: final.unreadable)
        }
        var sums = [Double](repeating: 0, count: 6), time = 0.0
        for index in ssims.indices {
            let end = index + 1 < final.times.count ? final.times[index + 1] : max(duration, final.times[index])
            let shown = max(end - final.times[index], 0.001)
            for (slot, value) in (ssims[index] + psnrs[index]).enumerated() { sums[slot] += value * shown }
            time += shown
            if printsFrames {
                FileHandle.standardError.write(Data(String(
                    format: "frame %d t=%.3f shown=%.3f step=%d ssim=%.5f y=%.5f psnr_u=%.2f\n", index, final.times[index], shown,
                    final.steps[index], ssims[index][0], ssims[index][1], psnrs[index][0]).utf8))
            }
        }
        let mean = sums.map { $0 / time }
        return Result(
            ssim: mean[0], ssimY: mean[1], ssimU: mean[2], ssimV: mean[3], psnrU: mean[4], psnrV: mean[5], frames: final.frames,
            unreadable: final.unreadable)
    }

    init(scene: TextScene, display: String, recording: String, duration: Double, printsFrames: Bool = false, fullColour: Bool = false) {
        (self.scene, self.display, self.recording, self.duration) = (scene, display, recording, duration)
        (self.printsFrames, self.fullColour) = (printsFrames, fullColour)
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
