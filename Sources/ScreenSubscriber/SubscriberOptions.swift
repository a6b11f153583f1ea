public import ArgumentParser
import Foundation
import ScreenWire
import ScreenSession
import ScreenTransportClient

/// screensub's options, and the sentences that refuse combinations that do not go together.
public struct SubscriberOptions: ParsableArguments {
    public init() {}

    @Option(help: "A recording made by screenpub: WebM, or Matroska (.mkv) for H.264 (or any AV1, VP9 or VP8 WebM, any H.264 Matroska).")
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

    @Option(help: "With --server: write the received stream to this WebM file (a .mkv Matroska file for an H.264 stream, which WebM cannot carry).")
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

    @Option(help: ArgumentHelp(
        "With --server: say that only these codecs are decoded here, as comma-separated codec strings or their beginnings (avc1.42 for H.264, av01.0, vp09.00): the relay sends the stream in one of them, asking the publisher for an H.264 rendition if it must. Default: say nothing, and get the stream as published (screensub decodes AV1, VP9, VP8 and H.264).",
        valueName: "codecs"))
    var decodesOnly: String?

    /// Refuses what cannot run, in a sentence naming the options (`ValidationError`). The command's `validate()`
    /// calls it: ArgumentParser says an option group's own refusal of an empty command line as the whole help.
    public func check() throws {
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
        if let decodesOnly {
            guard server != nil, !chat else { throw ValidationError("--decodes-only goes with --server") }
            let codecs = Self.codecStrings(decodesOnly)
            guard !codecs.isEmpty, codecs.count <= ControlMessage.maximumDecodes,
                codecs.allSatisfy({ $0.utf8.count <= ControlMessage.maximumCodecStringBytes && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "." } })
            else {
                throw ValidationError("--decodes-only takes 1 to \(ControlMessage.maximumDecodes) codec strings such as avc1.42,av01.0 (letters, digits and dots)")
            }
        }
    }

    /// `--decodes-only`'s codec strings.
    static func codecStrings(_ list: String) -> [String] {
        list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The token for --server, from --token-file, $SCREENSUB_TOKEN or --token (one of them).
    func resolvedToken() throws(TokenSourceError) -> String? {
        try TokenSource.resolve(option: token, file: tokenFile, environment: ProcessInfo.processInfo.environment, variable: "SCREENSUB_TOKEN")
    }
}
