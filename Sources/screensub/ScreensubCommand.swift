import ArgumentParser
import Foundation
import Logging
import ScreenCodec
import ScreenMedia
import ScreenRecording
import ScreenSession
import ScreenWire

@main
struct ScreensubCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "screensub",
        abstract: "Read a screenpub stream back: per-frame metadata and timing, decoded with libvpx.",
        discussion: """
            screensub --input share.webm --print-metadata lists every frame of a recording with its capture time \
            and metadata (from the WebM's timed metadata track). screensub --server URL --token TOKEN subscribes \
            to a live stream on screenrelay (the first one, or --stream ID) and does the same as frames arrive, \
            with the capture-to-arrival latency. Frames are decoded with libvpx, so a corrupt stream is reported.

            Exit status: 0 success; 1 the file could not be read or a frame could not be decoded; 64 invalid \
            command line.
            """,
        version: "0.1.0")

    @Option(help: "A WebM recording made by screenpub (or any VP8/VP9 WebM).")
    var input: String?

    @Option(help: "Subscribe on the screenrelay at this URL (http://host:port).")
    var server: String?

    @Option(help: "A subscriber token for --server.")
    var token: String?

    @Option(help: "The stream to subscribe to (default: the first one published).")
    var stream: UInt32?

    @Option(help: "With --server: stop after this many frames.")
    var frames: Int?

    @Option(help: "With --server: write the received stream to this WebM file.")
    var output: String?

    @Flag(help: "Print each frame's index, time, type, size, capture time and metadata.")
    var printMetadata = false

    @Flag(help: "Print one JSON object per frame instead of text.")
    var json = false

    @Flag(help: "Do not decode the frames (only read the container).")
    var noDecode = false

    func validate() throws {
        guard (input == nil) != (server == nil) else { throw ValidationError("give either --input FILE or --server URL") }
        if server != nil && token == nil { throw ValidationError("--server needs --token (a subscriber token)") }
        if input != nil && (output != nil || frames != nil || stream != nil) {
            throw ValidationError("--output, --frames and --stream go with --server")
        }
    }

    func run() async throws {
        if let server, let token {
            try await subscribe(server: server, token: token)
            return
        }
        guard let input else { return }
        do {
            let reader = try WebMReader(path: input)
            let decoder = noDecode ? nil : try VPXDecoder(codec: reader.codec)
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
                        try decoder.decode(payload) { picture in
                            decoded += 1
                            lastSize = (picture.width, picture.height)
                        }
                    }
                }
                if printMetadata { printFrame(frame, size: lastSize) }
            }
            if !json {
                emit("\(frames) frames, \(keyframes) keyframes" + (decoder != nil ? ", \(decoded) decoded" : ""))
            }
        } catch {
            FileHandle.standardError.write(Data("screensub: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }

    private func printFrame(_ frame: RecordedFrame, size: (Int, Int)) {
        let metadata = frame.cue?.metadata
        if json {
            var object: [String: Any] = [
                "index": frame.index, "time": frame.timestamp.seconds, "keyframe": frame.isKeyframe,
                "bytes": frame.payload.count,
            ]
            if let cue = frame.cue {
                object["captureTime"] = cue.captureTime.description
                object["wallClock"] = FrameMetadata.iso8601(cue.wallClock).text
                object["metadataBase64"] = Data(cue.metadata.bytes).base64EncodedString()
                if let text = cue.metadata.text { object["metadata"] = text }
            }
            if size.0 > 0 { object["width"] = size.0; object["height"] = size.1 }
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
                emit(String(decoding: data, as: UTF8.self))
            }
            return
        }
        var line = String(format: "frame %5d  t=%8.3fs  %@  %7d B", frame.index, frame.timestamp.seconds,
                          frame.isKeyframe ? "key  " : "delta", frame.payload.count)
        if let cue = frame.cue {
            line += "  capture=\(cue.captureTime)  wall=\(FrameMetadata.iso8601(cue.wallClock))"
            line += "  metadata=" + (metadata?.text.map { "\"\($0)\"" } ?? "0x\(metadata?.description ?? "")")
        } else {
            line += "  (no metadata cue)"
        }
        emit(line)
    }

    /// Subscribes to a live stream and prints (and optionally records) each frame as it arrives.
    private func subscribe(server: String, token: String) async throws {
        let url = RelayEndpoint.webSocketURL(server: server)
        var logger = Logger(label: "screensub")
        logger.logLevel = .warning
        let (wanted, limit, printing, asJSON, outputPath) = (stream, frames, printMetadata, json, output)
        do {
            let count = try await RelayClient.connect(url: url, token: token, client: "screensub/0.1.0", logger: logger) { link, events in
                var subscribedTo: UInt32?
                var decoder: VPXDecoder?
                var writer: WebMWriter?
                var received = 0
                defer { try? writer?.finish() }
                while let event = try await events.next() {
                    switch event {
                    case .control(.welcome(_, let sessionId, _, let streams, _)):
                        if !asJSON { emit("session \(sessionId): \(streams.count) stream(s)") }
                        if let chosen = streams.first(where: { wanted == nil || $0.streamId == wanted }) {
                            subscribedTo = chosen.streamId
                            try await link.send(.subscribe(streamId: chosen.streamId))
                        }
                    case .control(.streamCreated(let info)):
                        if subscribedTo == nil && (wanted == nil || info.streamId == wanted) {
                            subscribedTo = info.streamId
                            try await link.send(.subscribe(streamId: info.streamId))
                        }
                    case .control(.streamDestroyed(let id, let reason)) where id == subscribedTo:
                        if !asJSON { emit("stream \(id) ended: \(reason)") }
                        return received
                    case .control(.error(let code, let message)):
                        throw RelayClientError(.refused(code), "the relay answered \(code.rawValue): \(message)")
                    case .media(let header, let payload):
                        received += 1
                        let arrival = WallClockTime.now().millisecondsSince1970
                        if decoder == nil { decoder = try VPXDecoder(codec: header.codec) }
                        var size = (0, 0)
                        try payload.withUnsafeBytes { bytes in
                            try decoder?.decode(bytes) { size = ($0.width, $0.height) }
                            if let outputPath {
                                if writer == nil {
                                    writer = try WebMWriter(path: outputPath, codec: header.codec, width: header.width, height: header.height, framesPerSecond: 5)
                                }
                                try writer?.write(EncodedFrame(
                                    codec: header.codec, payload: bytes, isKeyframe: header.isKeyframe, width: header.width,
                                    height: header.height, captureTime: header.captureTime,
                                    wallClock: WallClockTime(millisecondsSince1970: header.wallClockMilliseconds), metadata: header.metadata))
                            }
                        }
                        if printing {
                            printLive(header, bytes: payload.count, size: size, latency: arrival - header.wallClockMilliseconds, json: asJSON)
                        }
                        if let limit, received >= limit { return received }
                    default:
                        continue
                    }
                }
                return received
            }
            if !json { emit("\(count) frames received") }
        } catch {
            FileHandle.standardError.write(Data("screensub: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }

    private func printLive(_ header: MediaFrameHeader, bytes: Int, size: (Int, Int), latency: Int64, json: Bool) {
        if json {
            var object: [String: Any] = [
                "stream": header.streamID, "sequence": header.sequence, "keyframe": header.isKeyframe, "bytes": bytes,
                "captureTime": header.captureTime.description, "latencyMilliseconds": latency,
                "metadataBase64": Data(header.metadata.bytes).base64EncodedString(), "width": size.0, "height": size.1,
            ]
            if let text = header.metadata.text { object["metadata"] = text }
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
                emit(String(decoding: data, as: UTF8.self))
            }
            return
        }
        let metadata = header.metadata.text.map { "\"\($0)\"" } ?? "0x\(header.metadata.description)"
        emit(String(format: "frame %5llu  %@  %7d B  %dx%d  latency %lld ms  capture=%@  metadata=%@",
                     header.sequence, header.isKeyframe ? "key  " : "delta", bytes, size.0, size.1, latency,
                     header.captureTime.description, metadata))
    }
}

/// Writes a line to standard output at once, also into a pipe: scripts follow frames as they arrive.
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
