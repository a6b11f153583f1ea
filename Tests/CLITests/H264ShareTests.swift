import Foundation
import ScreenMedia
import ScreenRecording
import ScreenTesting
import Testing

/// An H.264 share (`screenpub --codec h264`) recorded by screensub as it arrives: Matroska, since WebM cannot
/// carry H.264, and a `.webm` name refused with the sentence to name it `.mkv`.
@Suite(.watchdog()) struct H264ShareTests {
    @Test func screensubRecordsAnH264StreamToMatroskaAndRefusesAWebMName() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let share = try await RunningShare(["--display", display.name, "--codec", "h264", "--duration", "60", "--metadata", "h264 check"])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("h264-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let refused = try await ChildProcess.run(
            RunningShare.screensub, ["--server", share.server, "--token", share.viewerToken, "--output", directory + "/copy.webm", "--count", "1"],
            timeout: 30)
        #expect(refused.status == 1 && refused.standardError.contains("WebM cannot carry h264; name the file .mkv"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/copy.webm"))

        let copy = directory + "/copy.mkv"
        let recorded = try await ChildProcess.run(
            RunningShare.screensub, ["--server", share.server, "--token", share.viewerToken, "--output", copy, "--count", "1"], timeout: 30)
        #expect(recorded.status == 0, "\(recorded.standardError)")
        let probe = try await ChildProcess.run(
            "/usr/bin/ffprobe", ["-v", "error", "-show_entries", "format=format_name:stream=codec_name,profile", "-of", "csv=p=0", copy])
        #expect(probe.standardOutput.contains("h264,Constrained Baseline") && probe.standardOutput.contains("webvtt"), "\(probe.standardOutput)")
        let frames = try WebMReader(path: copy).readAll()
        #expect(frames.count == 1 && frames.first?.isKeyframe == true)
        #expect(frames.allSatisfy { $0.cue?.metadata == (try? FrameMetadata(text: "h264 check")) })
        share.process.signal(SIGINT)
        _ = await share.process.wait(timeout: 30)
    }
}
