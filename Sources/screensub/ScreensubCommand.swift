import ArgumentParser
import ScreenService
import ScreenSubscriber
import ScreenWire

@main
enum ScreensubMain {
    static func main() async {
        await CommandEntry.run(ScreensubCommand.self, arguments: Array(CommandLine.arguments.dropFirst()))
    }
}

/// `screensub`: a recording, a live stream, its chat or its HLS, read back and printed.
struct ScreensubCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "screensub",
        abstract: "Read a screenpub stream back: per-frame metadata and timing, decoded with libaom, libvpx or openh264.",
        discussion: """
            screensub --input share.webm --print-metadata lists every frame of a recording with its capture time \
            and metadata (from the WebM's timed metadata track; an H.264 share records to Matroska, .mkv, read the same way). screensub --server URL --token TOKEN subscribes \
            to a live stream on screenrelay (the first screen stream, or --stream ID) and does the same as frames \
            arrive, with the capture-to-arrival latency; a stream's sound (screenpub --audio) arrives as Opus \
            frames, printed as "audio" lines. Frames are decoded (AV1 with libaom, VP9 and VP8 with libvpx, H.264 with openh264), so a corrupt stream is \
            reported; --frames DIR writes every decoded picture as a PNG, --output FILE records the live stream as \
            a WebM, or Matroska for H.264 (with its metadata track and its Opus track), as it arrives and without re-encoding. screensub --hls URL \
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

    @OptionGroup var options: SubscriberOptions

    func validate() throws { try options.check() }

    /// The job the options ask for; exits 1 when it fails.
    func run() async throws {
        try await options.job?.run(output: .standard(name: Self.configuration.commandName ?? ""))
    }
}
