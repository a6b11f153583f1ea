import ArgumentParser
import Foundation
import Logging
import ScreenCodec
import ScreenMedia
import ScreenPipeline
import ScreenRecording
import ScreenSession
import ScreenTransport
import ScreenTransportClient
import ScreenWire

@main
struct ScreensubCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "screensub",
        abstract: "Read a screenpub stream back: per-frame metadata and timing, decoded with libaom or libvpx.",
        discussion: """
            screensub --input share.webm --print-metadata lists every frame of a recording with its capture time \
            and metadata (from the WebM's timed metadata track). screensub --server URL --token TOKEN subscribes \
            to a live stream on screenrelay (the first screen stream, or --stream ID) and does the same as frames \
            arrive, with the capture-to-arrival latency; a stream's sound (screenpub --audio) arrives as Opus \
            frames, printed as "audio" lines. Frames are decoded (AV1 with libaom, VP9 and VP8 with libvpx), so a corrupt stream is \
            reported; --frames DIR writes every decoded picture as a PNG, --output FILE records the live stream as \
            a WebM (with its metadata track and its Opus track), as it arrives and without re-encoding. screensub --hls URL \
            --print-metadata follows a live HLS stream (screenrelay's /hls/SESSION/index.m3u8?token=…) as a player \
            does and prints each segment's PROGRAM-DATE-TIME, each DATERANGE and each frame's ID3 metadata.

            Exit status: 0 success; 1 the file could not be read, a frame could not be decoded, or the relay closed \
            the connection before the stream ended; 64 invalid command line.

            The token for --server is read from --token-file FILE or $SCREENSUB_TOKEN; --token also takes it, but \
            shows it to every user of the machine (ps).

            Examples:
              screensub --input share.webm --print-metadata --json             # every frame as a JSON line
              screensub --input share.webm --frames pictures/                  # every picture as a PNG
              screensub --server http://relay:8090 --token-file token.txt --print-metadata   # a live stream, with latency
              SCREENSUB_TOKEN=eyJ… screensub --server http://relay:8090 --output copy.webm # record it as it arrives
              screensub --hls "http://relay:8090/hls/3f0c…/index.m3u8?token=eyJ…" --print-metadata
            """,
        version: ScreenpubVersion.current)

    @Option(help: "A WebM recording made by screenpub (or any AV1, VP9 or VP8 WebM).")
    var input: String?

    @Option(help: "Subscribe on the screenrelay at this URL (http://host:port).")
    var server: String?

    @Option(help: "Follow a live HLS stream (a relay's /hls/SESSION/index.m3u8?token=…, or any HLS URL) and print its timed metadata: each segment's PROGRAM-DATE-TIME and each DATERANGE, and with --print-metadata each frame's ID3 metadata (--json for JSON lines).")
    var hls: String?

    @Option(help: "With --hls: stop after this many segments.")
    var segments: Int?

    @Option(help: "Trust the CA certificates in this PEM file for an https:// relay, instead of the system's.")
    var caFile: String?

    @Option(help: "A subscriber token for --server. Every user of the machine sees it in ps: prefer --token-file or $SCREENSUB_TOKEN.")
    var token: String?

    @Option(help: "Read the subscriber token for --server from the first line of this file (or set $SCREENSUB_TOKEN).")
    var tokenFile: String?

    @Option(help: "The stream to subscribe to (default: the first one published).")
    var stream: UInt32?

    @Option(help: "With --server: stop after this many frames.")
    var count: Int?

    @Option(help: "Write every decoded picture to this directory as frame-NNNNNN.png (created if missing); from a relay, every picture shown (its catch-up frames are decoded, not shown).")
    var frames: String?

    @Option(help: "With --server: write the received stream to this WebM file.")
    var output: String?

    @Flag(help: "Print each frame's index, time, type, size, capture time and metadata.")
    var printMetadata = false

    @Flag(help: "Print one JSON object per frame instead of text (from a relay: with receivedAtMilliseconds, catchUp for the relay's cached pictures, decoded and not shown, and latencyMilliseconds for the others), and a last one of kind summary (frames received, rendered, catch-up, stale).")
    var json = false

    @Flag(name: .shortAndLong, help: "Log the connection's progress (connecting, welcome, subscribing, reconnecting) on standard error.")
    var verbose = false

    @Flag(help: "With --server: text chat. Prints the session's chat and other signals as they arrive and sends each line of standard input as a chat message to everyone; at the end of input, waits for the relay to echo the last line, then exits.")
    var chat = false

    @Option(help: "With --chat: send to this connection id only.")
    var to: String?

    @Flag(help: "Do not decode the frames (only read the container).")
    var noDecode = false

    func validate() throws {
        guard [input, server, hls].compactMap({ $0 }).count == 1 else { throw ValidationError("give one of --input FILE, --server URL or --hls URL") }
        if hls != nil && (output != nil || count != nil || stream != nil || frames != nil || chat || token != nil || tokenFile != nil) {
            throw ValidationError("--hls reads timed metadata: --output, --count, --stream, --frames, --chat, --token and --token-file go with --server (an HLS URL carries its token)")
        }
        if server == nil && (token != nil || tokenFile != nil) { throw ValidationError("--token and --token-file go with --server") }
        if let segments, segments <= 0 { throw ValidationError("--segments must be positive") }
        if segments != nil && hls == nil { throw ValidationError("--segments goes with --hls") }
        if server != nil {
            let resolved: String?
            do { resolved = try resolvedToken() } catch { throw ValidationError(error.description) }
            if resolved == nil { throw ValidationError("--server needs a subscriber token: --token-file FILE, $SCREENSUB_TOKEN or --token") }
        }
        if input != nil && (output != nil || count != nil || stream != nil) {
            throw ValidationError("--output, --count and --stream go with --server")
        }
        if let count, count <= 0 { throw ValidationError("--count must be positive") }
        if frames != nil && noDecode { throw ValidationError("--frames needs decoding; drop --no-decode") }
        if chat && server == nil { throw ValidationError("--chat goes with --server") }
        if caFile != nil {
            if server == nil && hls == nil { throw ValidationError("--ca-file goes with --server or --hls") }
            do { try ClientTrust(caFile: caFile).validate() } catch { throw ValidationError("--ca-file: \(error.message)") }
        }
        if to != nil && !chat { throw ValidationError("--to goes with --chat") }
    }

    /// The token for --server, from --token-file, $SCREENSUB_TOKEN or --token (one of them).
    func resolvedToken() throws(TokenSourceError) -> String? {
        try TokenSource.resolve(option: token, file: tokenFile, environment: ProcessInfo.processInfo.environment, variable: "SCREENSUB_TOKEN")
    }

    func run() async throws {
        let token = server == nil ? nil : try? resolvedToken()
        if let server, let token, chat {
            try await ChatClient(server: server, token: token, to: to, json: json, trust: ClientTrust(caFile: caFile)).run()
            return
        }
        if let hls {
            try await followHLS(hls)
            return
        }
        if let server, let token {
            try await subscribe(server: server, token: token)
            return
        }
        guard let input else { return }
        do {
            let reader = try WebMReader(path: input)
            let decoder = noDecode ? nil : try makeVideoDecoder(for: reader.codec)
            let pictures = try frames.map { try PNGSequence(directory: $0) }
            if !json {
                emit("\(input): \(reader.codec) \(reader.width)×\(reader.height), metadata track: \(reader.hasMetadataTrack ? "yes" : "no")")
            }
            var frames = 0, keyframes = 0, decoded = 0
            var lastSize = (0, 0)
            while let frame = try reader.nextFrame() {
                frames += 1
                if frame.isKeyframe { keyframes += 1 }
                if let decoder {
                    try frame.payload.withUnsafeBytes { payload in
                        try decoder.decode(
                            payload, captureTime: frame.cue?.captureTime ?? frame.timestamp,
                            wallClock: frame.cue?.wallClock ?? WallClockTime(secondsSince1970: 0, nanoseconds: 0),
                            metadata: frame.cue?.metadata ?? .empty
                        ) { picture in
                            decoded += 1
                            lastSize = (picture.width, picture.height)
                            try pictures?.render(picture)
                        }
                    }
                }
                if printMetadata { emit(RecordedFramePrinter.line(frame, size: lastSize, json: json)) }
            }
            if !json {
                emit("\(frames) frames, \(keyframes) keyframes" + (decoder != nil ? ", \(decoded) decoded" : ""))
            }
        } catch {
            FileHandle.standardError.write(Data("screensub: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }

    /// Follows a live HLS stream and prints its timed metadata in order.
    private func followHLS(_ url: String) async throws {
        let (asJSON, frames) = (json, printMetadata)
        do {
            var follower = HLSFollower(url: url, trust: ClientTrust(caFile: caFile))
            // A busy or briefly unreachable server is tried again for a while (30 s), as players do; each time in a line.
            follower.onRetry = { line in FileHandle.standardError.write(Data("screensub: \(line)\n".utf8)) }
            try await follower.run(segments: segments) { event in
                // Segments and date ranges always; each frame's metadata with --print-metadata.
                if case .frame = event, !frames { return }
                emit(event.line(json: asJSON))
            }
        } catch {
            FileHandle.standardError.write(Data("screensub: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }

    /// Subscribes to a live stream and prints, records and dumps each frame as it arrives.
    private func subscribe(server: String, token: String) async throws {
        var logger = Logger(label: "screensub")
        logger.logLevel = verbose ? .debug : .warning
        let (printing, asJSON, outputPath, directory) = (printMetadata, json, output, frames)
        let subscriber = StreamSubscriber(
            transport: WebSocketTransport(url: RelayEndpoint.webSocketURL(server: server), trust: ClientTrust(caFile: caFile)), token: token, streamId: stream,
            client: "screensub/\(ScreenpubVersion.current)", logger: logger)
        let makeRenderer: (@Sendable (StreamInfo) throws -> any VideoRenderer)? =
            if let directory { { _ in try PNGSequence(directory: directory) } } else { nil }
        let decodes: @Sendable (VideoCodec) throws -> any VideoDecoder = { codec in try makeVideoDecoder(for: codec) }
        let makeDecoder = noDecode ? nil : decodes
        do {
            let summary = try await Self.stoppedBySignals { try await subscriber.run(
                frameLimit: count, audio: true,
                makeDecoder: makeDecoder,
                makeRenderer: makeRenderer,
                makeSink: { stream throws -> any EncodedFrameSink in
                    var sinks: [any EncodedFrameSink] = []
                    if printing { sinks.append(LiveFramePrinter(json: asJSON, output: emit)) }
                    if let outputPath {
                        sinks.append(RecordingSink(
                            path: outputPath, framesPerSecond: stream.properties.estimatedFramesPerSecond, audio: stream.properties.audio))
                    }
                    return SinkGroup(sinks)
                },
                onWaiting: { sessionId in
                    if asJSON {
                        emit(#"{"event":"waiting","sessionId":"\#(sessionId)"}"#)
                    } else {
                        emit("session \(sessionId): waiting for a screen to be shared…")
                    }
                },
                onStream: { sessionId, stream in
                    if !asJSON {
                        let p = stream.properties
                        let sound = p.audio.map { ", \($0.codec) \($0.channels == 1 ? "mono" : "stereo")\(p.hasAudio ? "" : " (muted)")" } ?? ""
                        emit("session \(sessionId): stream \(stream.streamId) \"\(stream.name)\", \(p.videoType) \(p.width)×\(p.height) \(p.codec) ~\(p.estimatedFramesPerSecond) fps\(sound)\(p.hasVideo ? "" : ", paused")")
                    }
                },
                onPropertiesChanged: { stream in
                    let p = stream.properties
                    if asJSON {
                        let object: [String: Any] = [
                            "event": "streamPropertyChanged", "streamId": Int(stream.streamId), "hasVideo": p.hasVideo, "hasAudio": p.hasAudio,
                            "estimatedFramesPerSecond": p.estimatedFramesPerSecond,
                        ]
                        if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
                            emit(String(decoding: data, as: UTF8.self))
                        }
                    } else {
                        let sound = p.audio == nil ? "" : p.hasAudio ? ", sound on" : ", sound muted"
                        emit("stream \(stream.streamId): \(p.hasVideo ? "video on" : "paused by the publisher (last picture kept)")\(sound), ~\(p.estimatedFramesPerSecond) fps")
                    }
                },
                onReceptionChanged: { reception, framesPerSecond in
                    if asJSON {
                        emit(#"{"event":"subscriptionChanged","highestLayer":\#(reception.highestLayer),"layers":\#(reception.layers),"waitingForKeyframe":\#(reception.waitingForKeyframe)}"#)
                    } else {
                        emit(reception.message(streamFramesPerSecond: framesPerSecond))
                    }
                }) }
            if json {
                emit(#"{"kind":"summary","framesReceived":\#(summary.framesReceived),"framesRendered":\#(summary.framesRendered),"catchUpFrames":\#(summary.catchUpFrames),"staleFrames":\#(summary.staleFrames),"audioFramesReceived":\#(summary.audioFramesReceived)}"#)
            } else {
                let sound = summary.audioFramesReceived > 0 ? ", \(summary.audioFramesReceived) audio frames" : ""
                let catchUp = summary.catchUpFrames > 0 ? ", \(summary.catchUpFrames) catch-up" : ""
                emit("\(summary.framesReceived) frames received, \(summary.framesRendered) decoded\(sound)\(catchUp); \(summary.ending)")
            }
            if summary.connectionLost {
                FileHandle.standardError.write(Data(
                    "screensub: the relay closed the connection before the stream ended; what arrived was kept (\(summary.framesReceived) frames)\n".utf8))
                throw ExitCode(1)
            }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            FileHandle.standardError.write(Data("screensub: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}

extension ScreensubCommand {
    /// Runs `body` until it returns, or until SIGINT or SIGTERM cancels it (Ctrl-C: the recording is finished and
    /// the summary printed, as when the stream ends).
    static func stoppedBySignals<Result: Sendable>(_ body: @escaping @Sendable () async throws -> Result) async throws -> Result {
        let task = Task { try await body() }
        let sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler { task.cancel() }
            source.resume()
            return source
        }
        defer {
            for source in sources { source.cancel() }
        }
        return try await task.value
    }
}

/// Writes a line to standard output at once, also into a pipe: scripts follow frames as they arrive.
@Sendable func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
