import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import ScreenCodec
import ScreenMedia
import ScreenRecording
import ScreenSession
import ScreenTesting
import ScreenTransport
import ScreenTransportClient
import ScreenWire

/// Measures the relay: capture-to-decoded latency of a live screenpub stream, and fan-out to many subscribers.
@main
struct RelaybenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relaybench",
        abstract: "Measure screenrelay: end-to-end latency and fan-out (driven by Benchmarks/relay.sh).",
        subcommands: [Latency.self, Fanout.self, HLSLatency.self, AudioBench.self, TilesBench.self, WHIPBench.self, WHIPViewerBench.self, ControllerBench.self])
}

/// Latency in milliseconds from a frame's monotonic capture time (CLOCK_MONOTONIC, the same clock on one
/// machine) to now.
func millisecondsSince(_ captureTime: MediaTime) -> Double {
    let clock = MonotonicClock()
    let now = clock.mediaTime(fromTicks: clock.now())
    return (now.converted(to: MediaTime.nanosecondTimescale).value - captureTime.converted(to: MediaTime.nanosecondTimescale).value).millisecondsFromNanoseconds
}

extension Int64 {
    var millisecondsFromNanoseconds: Double { Double(self) / 1_000_000 }
}

/// "p50 … p99 … max …" of a sample in milliseconds.
func percentiles(_ samples: [Double]) -> (p50: Double, p90: Double, p99: Double, max: Double) {
    guard !samples.isEmpty else { return (.nan, .nan, .nan, .nan) }
    let sorted = samples.sorted()
    func at(_ fraction: Double) -> Double { sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.down)))] }
    return (at(0.5), at(0.9), at(0.99), sorted.last!)
}

/// Records how long after capture each decoded picture is ready.
final class LatencyRenderer: VideoRenderer {
    let samples: Locked<[Double]>
    let warmupUntil: ContinuousClock.Instant
    init(samples: Locked<[Double]>, warmupUntil: ContinuousClock.Instant) {
        self.samples = samples
        self.warmupUntil = warmupUntil
    }
    func render(_ frame: VideoFrame) throws {
        let latency = millisecondsSince(frame.captureTime)
        if ContinuousClock.now > warmupUntil { samples.withLock { $0.append(latency) } }
    }
}

struct Latency: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Subscribe to a live stream, decode it with libvpx and report capture-to-decoded latency.")

    @Option(help: "Relay URL (http://host:port).") var server: String
    @Option(help: "Subscriber token.") var token: String
    @Option(help: "Seconds to measure (after a 2 s warm-up).") var seconds: Double = 20

    func run() async throws {
        var logger = Logger(label: "relaybench")
        logger.logLevel = .warning
        let samples = Locked<[Double]>([])
        let warmupUntil = ContinuousClock.now + .seconds(2)
        let subscriber = StreamSubscriber(
            transport: WebSocketTransport(url: RelayEndpoint.webSocketURL(server: server)), token: token, client: "relaybench", logger: logger)
        let run = Task {
            try await subscriber.run(
                makeDecoder: { codec throws -> any VideoDecoder in try FrameDecoder(codec: codec) },
                makeRenderer: { _ throws -> any VideoRenderer in LatencyRenderer(samples: samples, warmupUntil: warmupUntil) })
        }
        try await Task.sleep(for: .seconds(2 + seconds))
        run.cancel()
        let values = samples.value
        let result = percentiles(values)
        print(String(format: "frames %d p50 %.1f p90 %.1f p99 %.1f max %.1f", values.count, result.p50, result.p90, result.p99, result.max))
    }
}

struct Fanout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "One publisher replaying a recording → N subscribers: relay CPU, added latency, bytes out.")

    @Option(help: "Relay URL (http://host:port).") var server: String
    @Option(help: "The relay secret (to make a session).") var secret: String
    @Option(help: "A WebM recording whose frames the publisher replays.") var recording: String
    @Option(help: "Subscribers.") var subscribers: Int = 10
    @Option(help: "Frames per second the publisher sends.") var fps: Double = 30
    @Option(help: "Seconds to measure (after a 2 s warm-up).") var seconds: Double = 10
    @Option(help: "The relay's process id, to read its CPU time and memory.") var relayPid: Int32
    @Option(help: "Further subscribers that subscribe and then stop reading (stalled viewers).") var stalled: Int = 0
    @Option(help: "Sample the relay's resident memory every this many seconds and report how flat it stays (a soak).")
    var sampleEvery: Double?
    @Option(help: "With --sample-every: seconds of warm-up before memory must stay flat.") var warmUp: Double = 300

    struct Session: Decodable { var sessionId: String; var token: String; var viewerURL: String }
    struct MintedToken: Decodable { var token: String }
    static let subscribersPerToken = 100

    func run() async throws {
        var logger = Logger(label: "relaybench")
        logger.logLevel = .critical
        let reader = try WebMReader(path: recording)
        let frames = try reader.readAll()
        guard let first = frames.first, first.isKeyframe else { throw ValidationError("\(recording) does not start with a keyframe") }
        let (codec, width, height) = (reader.codec, reader.width, reader.height)

        var request = URLRequest(url: URL(string: server + "/session")!)
        request.httpMethod = "POST"
        request.setValue("Bearer \(secret)", forHTTPHeaderField: "Authorization")
        let (data, _) = try await URLSession.shared.data(for: request)
        let session = try JSONDecoder().decode(Session.self, from: data)
        // A viewer token an audience of 100: one link for all would meet the relay's per-token shares (500
        // connections, joins 100 at once then 20 a second), which are not what is measured here.
        var subscriberTokens = [String(session.viewerURL.split(separator: "token=").last ?? "")]
        while subscriberTokens.count * Self.subscribersPerToken < subscribers + stalled {
            var mint = URLRequest(url: URL(string: server + "/session/\(session.sessionId)/token")!)
            mint.httpMethod = "POST"
            mint.setValue("Bearer \(secret)", forHTTPHeaderField: "Authorization")
            mint.setValue("application/json", forHTTPHeaderField: "Content-Type")
            mint.httpBody = Data(#"{"role": "subscriber"}"#.utf8)
            let (minted, _) = try await URLSession.shared.data(for: mint)
            subscriberTokens.append(try JSONDecoder().decode(MintedToken.self, from: minted).token)
        }
        let url = RelayEndpoint.webSocketURL(server: server)

        let measuring = Locked(false)
        let samples = Locked<[Double]>([])
        let received = Locked((frames: 0, bytes: 0))
        let ready = Locked(0)
        let done = Locked(false)

        // Subscribers: read every frame, no decoding (500 decoders would measure this process, not the relay).
        // Stalled ones subscribe and then never read again: the relay must drop for them, not queue.
        let stalledReady = Locked(0)
        var readers: [Task<Void, any Error>] = []
        for index in 0..<(subscribers + stalled) {
            let stalls = index >= subscribers
            readers.append(Task {
                try await RelayClient.connect(url: url, token: subscriberTokens[index / Self.subscribersPerToken], client: stalls ? "relaybench-stalled" : "relaybench", logger: logger) {
                    link, events in
                    var local: [Double] = []
                    var count = 0, bytes = 0
                    defer {
                        samples.withLock { $0.append(contentsOf: local) }
                        received.withLock { $0.frames += count; $0.bytes += bytes }
                    }
                    while !done.value, let event = try await events.next() {
                        switch event {
                        case .control(.welcome(_, _, _, let streams, _, _)):
                            if let stream = streams.first { try await link.send(.subscribe(streamId: stream.streamId)) }
                        case .control(.streamCreated(let stream)):
                            try await link.send(.subscribe(streamId: stream.streamId))
                        case .control(.subscribed) where stalls:
                            stalledReady.withLock { $0 += 1 }
                            while !done.value { try await Task.sleep(for: .seconds(1)) }
                            return
                        case .control(.subscribed):
                            ready.withLock { $0 += 1 }
                        case .media(let header, let payload):
                            if measuring.value {
                                local.append(millisecondsSince(header.captureTime))
                                count += 1
                                bytes += header.encodedSize + payload.readableBytes
                            }
                        default: continue
                        }
                    }
                }
            })
        }

        let clock = MonotonicClock()
        let sent = Locked(0)
        let publisher = Task {
            try await RelayClient.connect(url: url, token: session.token, client: "relaybench", logger: logger) { link, events in
                _ = try await events.nextControl()
                try await link.send(.publish(name: "bench", properties: StreamProperties(
                    codec: codec, width: width, height: height, estimatedFramesPerSecond: fps, estimatedCaptureDelayMilliseconds: 1)))
                guard case .published(let stream)? = try await events.nextControl(where: { if case .published = $0 { true } else { false } }) else {
                    throw ValidationError("the relay did not publish the stream")
                }
                let sender = Task {
                    let interval = Duration.seconds(1 / fps)
                    var next = ContinuousClock.now
                    var index = 0
                    var sequence: UInt64 = 0
                    while !done.value {
                        let frame = frames[index % frames.count]
                        let header = MediaFrameHeader(
                            streamID: stream.streamId, sequence: sequence, flags: frame.isKeyframe ? [.keyframe] : [], codec: codec,
                            width: width, height: height, captureTime: clock.mediaTime(fromTicks: clock.now()),
                            wallClockMilliseconds: WallClockTime.now().millisecondsSince1970, metadata: frame.cue?.metadata ?? .empty,
                            payloadLength: frame.payload.count)
                        try await link.send(header, payload: frame.payload)
                        if measuring.value { sent.withLock { $0 += 1 } }
                        index += 1
                        sequence += 1
                        next += interval
                        try await Task.sleep(until: next, clock: .continuous)
                    }
                }
                defer { sender.cancel() }
                // Keyframe requests and other events are read (and ignored) so that the socket keeps flowing.
                while try await events.next() != nil {}
            }
        }

        let connectDeadline = ContinuousClock.now + .seconds(60)
        while ready.value < subscribers || stalledReady.value < stalled, ContinuousClock.now < connectDeadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let connected = ready.value
        try await Task.sleep(for: .seconds(2))
        let cpuBefore = Self.cpuSeconds(of: relayPid)
        let start = ContinuousClock.now
        measuring.withLock { $0 = true }
        var memory: [(seconds: Double, megabytes: Double)] = [(0, Self.residentMegabytes(of: relayPid))]
        if let sampleEvery {
            let end = start + .seconds(seconds)
            while ContinuousClock.now < end {
                try await Task.sleep(until: min(end, start + .seconds(sampleEvery * Double(memory.count))), clock: .continuous)
                let sample = ((ContinuousClock.now - start) / .seconds(1), Self.residentMegabytes(of: relayPid))
                memory.append(sample)
                // (Straight to the descriptor: a soak's progress shows as it happens, even through a pipe.)
                FileHandle.standardOutput.write(Data(String(
                    format: "t %6.0f s  relay RSS %7.1f MB\n", sample.0, sample.1).utf8))
            }
        } else {
            try await Task.sleep(for: .seconds(seconds))
        }
        measuring.withLock { $0 = false }
        let elapsed = (ContinuousClock.now - start) / .seconds(1)
        let cpuAfter = Self.cpuSeconds(of: relayPid)
        done.withLock { $0 = true }
        publisher.cancel()
        for reader in readers { reader.cancel() }
        for reader in readers { _ = await reader.result }
        _ = await publisher.result
        if sampleEvery != nil {
            let settled = memory.filter { $0.seconds >= warmUp }.map(\.megabytes)
            if let low = settled.min(), let high = settled.max(), !settled.isEmpty {
                let mean = settled.reduce(0, +) / Double(settled.count)
                print(String(
                    format: "relay RSS after %.0f s of warm-up: %d samples, mean %.1f MB, min %.1f, max %.1f: within ±%.1f%% of the mean (stalled subscribers: %d connected)",
                    warmUp, settled.count, mean, low, high, 100 * max(high - mean, mean - low) / mean, stalledReady.value))
            }
        }

        let values = samples.value
        let latency = percentiles(values)
        let totals = received.value
        let expected = sent.value * connected
        print(String(
            format: "subscribers %d connected %d sent %d received %d missing %.2f%% p50 %.2f p99 %.2f max %.1f relayCPU %.1f%% outMbit %.1f relayRSSMB %.1f",
            subscribers, connected, sent.value, totals.frames,
            expected > 0 ? 100 * Double(max(0, expected - totals.frames)) / Double(expected) : 0,
            latency.p50, latency.p99, latency.max, 100 * (cpuAfter - cpuBefore) / elapsed,
            Double(totals.bytes) * 8 / elapsed / 1_000_000, Self.residentMegabytes(of: relayPid)))
    }

    /// user + system CPU seconds of a process, from /proc.
    static func cpuSeconds(of pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // Fields after the command: state is index 0, so utime (14th overall) is 11, stime 12.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func residentMegabytes(of pid: Int32) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return Double(line.split(separator: " ").dropFirst().first ?? "0").map { $0 / 1024 } ?? 0
    }
}

/// Glass-to-glass through HLS: the viewer page's HLS mode in a real headless Chromium, sampled for the delay
/// between each shown frame's capture (wall clock, from its ID3 metadata) and the moment Chromium presents it.
struct HLSLatency: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hls-latency",
        abstract: "Open a viewer link with &hls=1 in headless Chromium and report capture-to-presented delay over HLS.")

    @Option(help: "The viewer link (…/view/SESSION?token=…); &hls=1 is added.")
    var url: String

    @Option(help: "Seconds to measure, after the first picture.")
    var seconds: Double = 30

    func run() async throws {
        let browser = try await HeadlessBrowser(url: url + "&hls=1")
        defer { browser.close() }
        // Until the first picture (an LL-HLS player starts at the newest part a keyframe starts; another, three
        // segments from the live edge).
        let started = ContinuousClock.now
        while (try? await browser.evaluate("screenViewer.framesDecoded", as: Int.self)) ?? 0 == 0 {
            guard ContinuousClock.now - started < .seconds(60) else { throw ValidationError("no picture over HLS within 60 s") }
            try await Task.sleep(for: .milliseconds(100))
        }
        var samples: [Double] = []
        let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < end {
            if let latency = try? await browser.evaluate("screenViewer.lastLatencyMs", as: Double.self) { samples.append(latency) }
            try await Task.sleep(for: .milliseconds(200))
        }
        let sorted = samples.filter(\.isFinite).sorted()
        func at(_ fraction: Double) -> Int { sorted.isEmpty ? 0 : Int(sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]) }
        print("samples \(sorted.count) p50 \(at(0.5)) p90 \(at(0.9)) p95 \(at(0.95)) p99 \(at(0.99)) max \(sorted.last.map { Int($0) } ?? 0)")
    }
}
