import Foundation
import Logging
import ScreenCodec
import ScreenMedia
import ScreenSession
import ScreenTesting
import ScreenTransport
import ScreenTransportClient
import ScreenWire
import Testing

/// `screenpub --audio` end to end with real parts: a private PipeWire with a test source playing a known
/// signal, the X picture on Xvfb, screenpub and its embedded relay, and a subscriber that decodes the Opus it
/// receives with libopus (and screensub recording a WebM, decoded by ffmpeg).
@Suite(.watchdog(), .serialized) struct AudioShareTests {
    /// What the subscriber received (decoded sound, picture brightness) and the stream's announcements.
    final class Reception: Sendable {
        let media = SoundAndPictures()
        let stream = Locked<StreamInfo?>(nil)
        let properties = Locked<[StreamProperties]>([])
        var sounds: Locked<[SoundAndPictures.Sound]> { media.sounds }
        var pictures: Locked<[SoundAndPictures.Picture]> { media.pictures }
    }

    /// A share of `display` with the sound of `tone`, to its embedded relay.
    func share(_ display: VirtualDisplay, _ pipewire: PrivatePipeWire, _ tone: PipeWireTestTone, _ extra: [String] = []) async throws -> RunningShare {
        try await tone.waitUntilListed(on: pipewire)
        return try await RunningShare(
            ["--display", display.name, "--audio", tone.name, "--fps", "10", "--keepalive", "0.1"] + extra,
            environment: ["PIPEWIRE_RUNTIME_DIR": pipewire.runtimeDirectory])
    }

    /// Subscribes with audio and collects until `pictures` video frames have arrived (10 a second here).
    func receive(_ share: RunningShare, pictures: Int) -> (Reception, Task<SubscriptionSummary, any Error>) {
        let reception = Reception()
        let subscriber = StreamSubscriber(
            transport: WebSocketTransport(url: RelayEndpoint.webSocketURL(server: share.server)), token: share.viewerToken,
            logger: Logger(label: "test"))
        let task = Task {
            try await subscriber.run(
                frameLimit: pictures, audio: true, makeDecoder: { try makeVideoDecoder(for: $0) },
                makeRenderer: { _ in reception.media.collector() }, makeSink: { _ in reception.media.collector() },
                onStream: { _, stream in reception.stream.withLock { $0 = stream } },
                onPropertiesChanged: { stream in reception.properties.withLock { $0.append(stream.properties) } })
        }
        return (reception, task)
    }

    /// The strongest frequency between `low` and `high` Hz (1 Hz steps, Goertzel) in `samples` (mono).
    static func dominantFrequency(_ samples: [Float], low: Int, high: Int) -> Double {
        var best = (frequency: 0, power: -1.0)
        for frequency in low...high {
            let coefficient = 2 * cos(2 * Double.pi * Double(frequency) / 48_000)
            var (previous, beforePrevious) = (0.0, 0.0)
            for sample in samples {
                let current = Double(sample) + coefficient * previous - beforePrevious
                (beforePrevious, previous) = (previous, current)
            }
            let power = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
            if power > best.power { best = (frequency, power) }
        }
        return Double(best.frequency)
    }

    /// The median of the dominant frequency of each 20 ms frame's left channel, from the `skipping`+1th frame on
    /// (the codec's start), over at most `frames` frames. A frame's own measure is exact for a clean tone, and the
    /// median leaves out the frames a loaded machine broke (samples lost before capture, whose phase jumps move the
    /// peak of a measure across them: 430 Hz for 440 so, with every test at once).
    static func medianFrameFrequency(_ sounds: [SoundAndPictures.Sound], skipping: Int, frames: Int, low: Int, high: Int) -> Double {
        median(sounds.dropFirst(skipping).prefix(frames).map { dominantFrequency(SoundAndPictures.left([$0]), low: low, high: high) })
    }

    @Test func aToneReachesTheSubscriberAtItsFrequencyOnTheVideosClock() async throws {
        let pipewire = try await PrivatePipeWire(busActivation: false)
        let display = try await VirtualDisplay(width: 320, height: 240)
        let tone = try PipeWireTestTone(on: pipewire, name: "screenpub-test-tone", signal: .tone(frequency: 440, amplitude: 0.5))
        let share = try await share(display, pipewire, tone)
        let (reception, task) = receive(share, pictures: 30)
        let summary = try await task.value
        let sounds = reception.sounds.value
        #expect(summary.audioFramesReceived >= 50, "\(summary.audioFramesReceived) audio frames in \(summary.framesReceived) pictures; \(share.process.errorsSoFar)")
        #expect(reception.stream.value?.properties.audio == AudioProperties(channels: 2, estimatedCaptureDelayMilliseconds: reception.stream.value?.properties.audio?.estimatedCaptureDelayMilliseconds ?? -1))
        // After the codec's start, the tone's frequency within 2 %.
        let measured = Self.medianFrameFrequency(sounds, skipping: 10, frames: 25, low: 300, high: 600)
        #expect(abs(measured - 440) / 440 < 0.02, "\(measured) Hz")
        // Frames follow each other 20 ms apart on the capture clock (more where samples were lost: a loaded
        // machine starves the private PipeWire of many cycles; never less); sound and pictures share that clock.
        let steps = zip(sounds.dropFirst(), sounds).map { Double($0.captureTime - $1.captureTime) / 1e6 }
        #expect(steps.allSatisfy { $0 > 19.5 }, "\(steps.filter { $0 <= 19.5 })")
        #expect(steps.filter { abs($0 - 20) < 0.5 }.count * 4 >= steps.count, "\(steps)")
        let pictures = reception.pictures.value
        if let firstPicture = pictures.first?.captureTime, let lastSound = sounds.last?.captureTime {
            #expect(abs(Double(lastSound - firstPicture) / 1e9) < 10, "audio and video capture times are on one clock")
        }
        // Capture to arrival through the relay: a few tens of ms on one machine (Benchmarks/audio.sh measures it;
        // here the bound only catches sound held back by seconds, as the whole suite loads the machine).
        let latencies = sounds.map { Double($0.arrived - $0.captureTime) / 1e6 }.sorted()
        #expect(latencies[latencies.count / 2] < 1000, "median audio latency \(latencies[latencies.count / 2]) ms")
    }

    @Test func silenceSendsOnlySparseDTXFramesAndMuteStopsTheSoundWhileThePictureGoesOn() async throws {
        let pipewire = try await PrivatePipeWire(busActivation: false)
        let display = try await VirtualDisplay(width: 320, height: 240)
        let tone = try PipeWireTestTone(on: pipewire, name: "screenpub-test-silence", signal: .silence)
        let share = try await share(display, pipewire, tone)
        let (reception, task) = receive(share, pictures: 10_000)
        let clock = MonotonicClock()
        func now() -> Int64 { Int64(clock.nanoseconds(fromTicks: clock.now())) }
        // Sound flows once the subscription is made; then 2 s of silence, 3 s of a tone (a loaded machine may take
        // most of a second to start playing it), then muted.
        #expect(try await eventually(20) { !reception.sounds.value.isEmpty }, "no sound came: \(share.process.errorsSoFar)")
        try await Task.sleep(for: .seconds(2))
        let toneStarted = now()
        tone.play(.tone(frequency: 1000, amplitude: 0.3))
        try await Task.sleep(for: .seconds(3))
        let muted = now()
        let mute = try await share.control(["mute"])
        #expect(mute.status == 0, "\(mute.standardError)")
        let answered = now()
        let status = try await share.status()
        #expect(status["muted"] as? Bool == true && (status["audio"] as? String)?.contains("screenpub-test-silence") == true, "\(status)")
        try await Task.sleep(for: .seconds(2))
        task.cancel()
        _ = try? await task.value
        let sounds = reception.sounds.value
        let pictures = reception.pictures.value
        let silent = sounds.filter { $0.captureTime < toneStarted - 100_000_000 && $0.captureTime > toneStarted - 1_600_000_000 }
        #expect(!silent.isEmpty && silent.allSatisfy { $0.silence && $0.bytes <= 3 }, "\(silent.map { ($0.silence, $0.bytes) })")
        // One DTX frame every 400 ms: 3–5 in 1.5 s, not 75.
        #expect((2...5).contains(silent.count), "\(silent.count) silent frames in 1.5 s")
        let loud = sounds.filter { $0.captureTime > toneStarted + 300_000_000 && $0.captureTime < muted }
        #expect(loud.count > 50 && loud.allSatisfy { !$0.silence }, "\(loud.count) frames of tone")
        // Muted: nothing captured after `screenpub mute` answered (frames captured before may still be on their
        // way on a loaded machine), pictures still.
        let afterMute = answered + 500_000_000
        #expect(sounds.filter { $0.captureTime > answered }.isEmpty, "\(sounds.filter { $0.captureTime > answered }.count) audio frames captured after mute")
        #expect(pictures.filter { $0.arrived > afterMute }.count >= 5, "the picture stopped too")
        #expect(reception.properties.value.last?.hasAudio == false)
    }

    @Test func aFlashAndABeepCapturedTogetherArriveTogether() async throws {
        let pipewire = try await PrivatePipeWire(busActivation: false)
        let display = try await VirtualDisplay(width: 320, height: 240)
        let clock = MonotonicClock()
        let start = clock.nanoseconds(fromTicks: clock.now()) + 3_000_000_000
        let instants = (0..<4).map { start + UInt64($0) * 1_000_000_000 }
        let tone = try PipeWireTestTone(on: pipewire, name: "screenpub-test-beeps", signal: .beeps(frequency: 1000, at: instants, milliseconds: 150))
        // 60 fps: a picture's capture time is the tick after the paint, up to a frame interval later.
        let share = try await share(display, pipewire, tone, ["--fps", "60", "--keepalive", "0.05"])
        let recording = share.home + "/sub.webm"
        let screensub = try ChildProcess(RunningShare.screensub, ["--server", share.server, "--token", share.viewerToken, "--output", recording, "--count", "400"])
        let (reception, task) = receive(share, pictures: 400)
        let painter = try XPainter(displayName: display.name)
        let black = XPainter.pixel(red: 0, green: 0, blue: 0)
        let canvas = painter.createWindow(PixelRect(x: 0, y: 0, width: 320, height: 240), color: black)
        // Painted at each beep's instant.
        let painted = try await painter.flash(window: canvas, PixelRect(x: 0, y: 0, width: 320, height: 240), at: instants, clock: clock)
        _ = try await task.value
        // Pictures come at least every 50 ms (--keepalive 0.05): a longer gap before a flash means dropped frames.
        // A flash this test painted late (it or the X server starved on a loaded machine: the paint returned more than
        // 100 ms after its beep's instant) says nothing of the share's sync: the others are measured.
        let onTime = zip(instants, painted).filter { $0.1 <= $0.0 + 100_000_000 }.map(\.0)
        let (flashes, beeps, offsets) = reception.media.offsets(at: onTime.map(Int64.init), frameGap: 80_000_000)
        #expect(
            onTime.count >= 3 && flashes >= onTime.count - 1 && beeps == onTime.count,
            "flashes \(flashes), beeps \(beeps) at \(instants); painted at \(painted)")
        // Within ±40 ms (the median; each within ±150 ms, as the whole suite loads this machine meanwhile and a
        // picture's capture time is the tick after the paint: one of four was 104 ms off in a loaded run;
        // Benchmarks/audio.sh measures the distribution).
        #expect(abs(Self.median(offsets)) <= 40 && offsets.allSatisfy { abs($0) <= 150 }, "audio − video at the subscriber: \(offsets) ms")

        // The same in screensub's recording, as ffmpeg decodes it.
        let outcome = await screensub.wait(timeout: 60)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let fileOffsets = try await Self.offsetsInRecording(recording)
        // (The recording holds the late-painted flashes too: as many of its largest offsets are left out. A flash
        // after a gap of over 80 ms is not measured, and one after a shorter gap may show up to that late: with every
        // test at once the recording subscriber has fallen behind at three of four flashes, the relay dropping its
        // frames up to a keyframe, and the one left was 71 ms off. So each within ±100 ms, and the median within
        // ±40 ms where three or more were measured.)
        let measured = fileOffsets.sorted { abs($0) < abs($1) }.dropLast(instants.count - onTime.count)
        #expect(
            !measured.isEmpty && (measured.count < 3 || abs(Self.median(Array(measured))) <= 40) && measured.allSatisfy { abs($0) <= 100 },
            "audio − video in the WebM: \(fileOffsets) ms; painted at \(painted) for \(instants)")
    }

    /// For each flash in a WebM (a frame whose average luma jumps above 128): its time, and the first beep
    /// sample after it − 200 ms, as ffmpeg decodes the file; returns audio − video per flash, in ms. A flash whose
    /// frame follows a gap (the recording subscriber fell behind and the relay dropped frames up to a keyframe)
    /// is not where the flash began: it is left out.
    static func offsetsInRecording(_ path: String) async throws -> [Double] {
        let ffprobe = "/usr/bin/ffprobe"
        let frames = try await run(ffprobe, [
            "-v", "error", "-f", "lavfi", "movie=\(path),signalstats", "-show_entries", "frame=pts_time:frame_tags=lavfi.signalstats.YAVG",
            "-of", "csv=p=0",
        ])
        var flashTimes: [Double] = []
        var wasBright = false
        var previous = -Double.infinity
        for line in frames.split(separator: "\n") {
            let fields = line.split(separator: ",").compactMap { Double($0) }
            guard fields.count == 2 else { continue }
            let bright = fields[1] > 128
            // Frames come at least every 50 ms (--keepalive 0.05).
            if bright && !wasBright && fields[0] - previous < 0.08 { flashTimes.append(fields[0]) }
            wasBright = bright
            previous = fields[0]
        }
        let audioStart = Double(try await run(ffprobe, ["-v", "error", "-select_streams", "a", "-show_entries", "stream=start_time", "-of", "csv=p=0", path]).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        let samples = try await RecordedSound.monoSamples(of: path)
        return flashTimes.compactMap { flash in
            let from = max(0, Int((flash - 0.2 - audioStart) * 48_000)), to = min(samples.count, from + 24_000)
            guard from < to, let index = samples[from..<to].firstIndex(where: { abs($0) > 0.1 }) else { return nil }
            return ((audioStart + Double(index) / 48_000) - flash) * 1000
        }
    }

    static func median(_ values: [Double]) -> Double { values.isEmpty ? .infinity : values.sorted()[values.count / 2] }

    static func run(_ program: String, _ arguments: [String]) async throws -> String {
        let outcome = try await ChildProcess.run(program, arguments, timeout: 60)
        guard outcome.status == 0 else { throw RunningRelayProcess.Failure(description: "\(program) failed: \(outcome.standardError)") }
        return outcome.standardOutput
    }

    /// The browser viewer decodes the sound with WebCodecs' AudioDecoder and plays it through its AudioWorklet.
    /// Headless Chromium plays into no device (and is started muted): that the sound is heard cannot be checked
    /// here; that it is decoded, scheduled and consumed by the worklet can.
    @Test func theViewerDecodesAndPlaysTheSoundAndShowsWhenItIsMuted() async throws {
        let pipewire = try await PrivatePipeWire(busActivation: false)
        let display = try await VirtualDisplay(width: 320, height: 240)
        let tone = try PipeWireTestTone(on: pipewire, name: "screenpub-test-viewer", signal: .tone(frequency: 440, amplitude: 0.5))
        let share = try await share(display, pipewire, tone)
        let browser = try await HeadlessBrowser(url: share.viewerURL, arguments: ["--autoplay-policy=no-user-gesture-required"])
        defer { browser.close() }
        #expect(try await eventually(30) { ((try? await browser.evaluate("screenViewer.audioFramesDecoded", as: Int.self)) ?? 0) >= 50 })
        #expect(try await browser.evaluate("screenViewer.audioDecoderErrors", as: Int.self) == 0)
        #expect(try await browser.evaluate("document.getElementById('sound').hidden", as: Bool.self) == false)
        // The speaker button starts the output; the worklet then plays chunk after chunk.
        _ = try await browser.evaluateJSON("document.getElementById('sound').click(), true")
        let played = try await eventually(20) {
            ((try? await browser.evaluate("screenViewer.audioWorklet ? screenViewer.audioWorklet.played : 0", as: Int.self)) ?? 0) >= 25
        }
        let worklet = (try? await browser.evaluateJSON("[screenViewer.audioWorklet, screenViewer.audioDelayMs]")) ?? "?"
        #expect(played, "worklet and delay: \(worklet)")
        #expect(try await browser.evaluate("screenViewer.audioPlaying", as: Bool.self))
        let delay = try await browser.evaluate("screenViewer.audioDelayMs", as: Int.self)
        #expect(delay >= 60 && delay <= 1000, "playout delay \(delay) ms")
        // Muted by the presenter: a badge, and no more frames.
        #expect(try await share.control(["mute"]).status == 0)
        #expect(try await eventually(30) { (try? await browser.evaluate("!document.getElementById('muted-badge').hidden", as: Bool.self)) == true })
        #expect(try await browser.evaluate("screenViewer.audioMuted", as: Bool.self))
    }

    /// A mono source stays mono; a surround one is downmixed to stereo.
    @Test(arguments: [(1, 1), (6, 2)])
    func theChannelsFollowTheSource(source: Int, shared: Int) async throws {
        let pipewire = try await PrivatePipeWire(busActivation: false)
        let display = try await VirtualDisplay(width: 320, height: 240)
        let tone = try PipeWireTestTone(on: pipewire, name: "screenpub-test-\(source)ch", channels: source, signal: .tone(frequency: 440, amplitude: 0.5))
        let share = try await share(display, pipewire, tone)
        let (reception, task) = receive(share, pictures: 15)
        _ = try await task.value
        #expect(reception.stream.value?.properties.audio?.channels == shared, "\(String(describing: reception.stream.value?.properties.audio)); \(share.process.errorsSoFar)")
        #expect(!reception.sounds.value.isEmpty && reception.sounds.value.allSatisfy { $0.channels == shared })
        let measured = Self.medianFrameFrequency(reception.sounds.value, skipping: 10, frames: 25, low: 300, high: 600)
        #expect(abs(measured - 440) / 440 < 0.02, "\(measured) Hz")
    }

    /// Records `seconds` of `--audio node` to a WebM and returns the dominant frequency of its sound (after the
    /// first half second) and screenpub's standard error.
    func recordedFrequency(_ node: String, _ pipewire: PrivatePipeWire, seconds: Int = 4) async throws -> (frequency: Double, errors: String) {
        let display = try await VirtualDisplay(width: 320, height: 240)
        var environment = RunningShare.environment(home: pipewire.runtimeDirectory)
        environment["PIPEWIRE_RUNTIME_DIR"] = pipewire.runtimeDirectory
        let path = pipewire.runtimeDirectory + "/\(UUID().uuidString.prefix(6)).webm"
        let outcome = try await ChildProcess.run(
            RunningShare.screenpub,
            ["--display", display.name, "--audio", node, "--output", path, "--duration", String(seconds), "--control-socket", ""],
            environment: environment, timeout: 60)
        guard outcome.status == 0 else { return (0, outcome.standardError) }
        let samples = try await RecordedSound.monoSamples(of: path)
        return (Self.dominantFrequency(Array(samples.dropFirst(24_000).prefix(48_000)), low: 200, high: 1200), outcome.standardError)
    }

    /// `--audio NODE` finds the node through PipeWire's registry, whatever it is: an output by its node.name
    /// (captured as what it plays: its monitor) or by id, and an application's playback stream by its node.name.
    /// The output here is a null sink named as the README's example names a sound card's output: a real sound
    /// card cannot exist on this machine, and a null sink is the same kind of node (Audio/Sink with a monitor).
    @Test func anOutputAnApplicationsStreamOrAnIdIsRecordedAsWhatItPlays() async throws {
        let pipewire = try await PrivatePipeWire(busActivation: false)
        let sink = "alsa_output.pci-0000_00_1f.3.analog-stereo"
        let sinkID = try await pipewire.addNullSink(named: sink)
        let player = try await pipewire.playTone(frequency: 660, into: sink, streamName: "screenpub-test-player")
        defer { player.signal(SIGKILL) }
        for node in [sink, String(sinkID), "screenpub-test-player"] {
            let (frequency, errors) = try await recordedFrequency(node, pipewire)
            #expect(abs(frequency - 660) < 660 * 0.02, "--audio \(node): \(frequency) Hz; \(errors)")
        }
    }

    @Test func anUnknownNodeIsNamedWithTheSoundNodesThatExist() async throws {
        let pipewire = try await PrivatePipeWire(busActivation: false)
        try await pipewire.addNullSink(named: "screenpub-test-speakers")
        let display = try await VirtualDisplay(width: 320, height: 240)
        var environment = RunningShare.environment(home: pipewire.runtimeDirectory)
        environment["PIPEWIRE_RUNTIME_DIR"] = pipewire.runtimeDirectory
        for (node, said) in [
            ("no-such-node", "PipeWire has no node no-such-node to capture: its sound nodes are screenpub-test-speakers (Audio/Sink)"),
            ("4000000", "PipeWire has no node 4000000 to capture"),
        ] {
            let outcome = try await ChildProcess.run(
                RunningShare.screenpub,
                ["--display", display.name, "--audio", node, "--output", pipewire.runtimeDirectory + "/a.webm", "--duration", "1", "--control-socket", ""],
                environment: environment, timeout: 30)
            #expect(outcome.status == 2, "\(outcome.standardError)")
            #expect(outcome.standardError.contains(said) && outcome.standardError.contains("`pw-cli ls Node`"), "\(outcome.standardError)")
            #expect(!FileManager.default.fileExists(atPath: pipewire.runtimeDirectory + "/a.webm"))
        }
    }

    @Test func withoutAPipeWireDaemonTheShareSaysSoOrGoesOnWithoutSound() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("nopw-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        var environment = RunningShare.environment(home: home)
        environment["PIPEWIRE_RUNTIME_DIR"] = home  // no daemon there
        environment["PIPEWIRE_REMOTE"] = nil
        let refused = try await ChildProcess.run(
            RunningShare.screenpub, ["--display", display.name, "--audio", "desktop", "--output", home + "/a.webm", "--duration", "1", "--control-socket", ""],
            environment: environment, timeout: 30)
        #expect(refused.status == 2, "\(refused.standardError)")
        #expect(refused.standardError.contains("no PipeWire daemon answers"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: home + "/a.webm"))
        let optional = try await ChildProcess.run(
            RunningShare.screenpub,
            ["--display", display.name, "--audio", "desktop", "--audio-optional", "--output", home + "/b.webm", "--duration", "1", "--control-socket", ""],
            environment: environment, timeout: 30)
        #expect(optional.status == 0, "\(optional.standardError)")
        #expect(optional.standardError.contains("sharing the screen without sound"), "\(optional.standardError)")
        #expect(FileManager.default.fileExists(atPath: home + "/b.webm"))
    }
}
