import Foundation
import ScreenCodec
import ScreenMedia
import ScreenRecording
import ScreenTesting
import Testing

/// Which README commands each scenario runs. Every command the README shows is in one of them (checked below),
/// so an example added to the README without a test, or changed so that its test no longer finds it, fails the
/// build.
enum ReadmeScenario: String, CaseIterable, Sendable {
    case build, usage, sound, live, standaloneRelay, admin, httpAPI, tls, archives, hls, whip, chat, service, control, wayland, masks

    static let commands: [ReadmeScenario: [String]] = [
        .build: [
            "make demo", "make test", "make deb", "sudo apt install ./out/screenpub_0.1.0_amd64.deb", "make release",
            "install -m755 .build/release/screenpub .build/release/screensub .build/release/screenrelay /usr/local/bin/",
            "install -d /usr/local/share/screenpub/viewer", "install -m644 Sources/ScreenRelay/Viewer/* /usr/local/share/screenpub/viewer/",
            "make bench",
        ],
        .usage: [
            "screenpub --output share.webm", "screenpub --output share.webm --duration 60 --fps 2", "screenpub --list-windows",
            "screenpub --output win.webm --window '*firefox*'", "screenpub --output win.webm --window 0x3a00007", "screenpub --list-monitors",
            "screenpub --output mon.webm --monitor HDMI-1", "screenpub --output part.webm --region 0,0,1280,720",
            "screenpub --output s.webm --codec vp9", "screenpub --output s.webm --codec vp8 --bitrate 800", "screenpub --codec h264 --output share.mkv",
            "screenpub --output s.webm --chroma 444", "screenpub --output s.webm --metadata \"room 42\"", "screenpub --display :1 --no-cursor --output s.webm",
            "screensub --input share.webm --print-metadata", "screensub --input share.webm --print-metadata --json",
            "screensub --input share.webm --frames pictures/", "screensub --input share.mkv --print-metadata",
        ],
        .sound: [
            "screenpub --audio desktop", "screenpub --audio mic --audio-bitrate 32", "screenpub --audio alsa_output.pci-0000_00_1f.3.analog-stereo",
            "screenpub --audio desktop --audio-optional", "screenpub mute ; screenpub unmute",
        ],
        .live: [
            "screenpub --port 8090", "screensub --server http://127.0.0.1:8090 --token <subscriber token> --print-metadata",
            "screensub --server http://127.0.0.1:8090 --token <subscriber token> --output live.webm --count 100 --frames shots/",
            "screenpub --server http://relay:8090 --to file:/tmp/share.webm --to ws://other:8090/ws --token <publisher token>",
        ],
        .standaloneRelay: [
            "export SCREENRELAY_SECRET=$(head -c 32 /dev/urandom | base64)", "screenrelay --host 127.0.0.1 --port 8090 &",
            "screenpub --server http://127.0.0.1:8090", "screenpub --server http://127.0.0.1:8090 --token <publisher token>",
        ],
        .admin: [
            "screenrelay session create --title \"Friday demo\"", "screenrelay sessions", "screenrelay token <sessionId> --name Ada --expires 2h",
            "screenrelay token <sessionId> --role moderator --name Mo", "screenrelay archive start <sessionId> --name standup",
            "screenrelay archive list", "screenrelay archive stop <archiveId>", "screenrelay archive download <archiveId> -o standup.webm",
            "screenrelay archive delete <archiveId>",
        ],
        .httpAPI: [
            "curl -s -X POST -H \"Authorization: Bearer $SCREENRELAY_SECRET\" -d '{\"title\":\"Friday demo\"}' http://127.0.0.1:8090/session",
            "curl -s -X POST -H \"Authorization: Bearer $SCREENRELAY_SECRET\" -d '{\"role\":\"subscriber\",\"expiresIn\":3600,\"data\":\"name=Ada\"}' http://127.0.0.1:8090/session/<sessionId>/token",
            "curl -s -H \"Authorization: Bearer $SCREENRELAY_SECRET\" http://127.0.0.1:8090/session",
            "curl -s \"http://127.0.0.1:8090/session/<sessionId>?token=<any token of it>\"",
            "curl -s -X POST -H \"Authorization: Bearer $SCREENRELAY_SECRET\" -d '{\"type\":\"chat\",\"data\":\"the relay restarts at 5\"}' http://127.0.0.1:8090/session/<sessionId>/signal",
            "curl -s http://127.0.0.1:8090/healthz", "curl -s http://127.0.0.1:8090/metrics",
        ],
        .tls: [
            "screenpub --host 0.0.0.0 --port 8443 --tls-cert /etc/ssl/screen.pem --tls-key /etc/ssl/screen.key",
            "screenrelay --host 0.0.0.0 --port 8443 --tls-cert fullchain.pem --tls-key privkey.pem",
            "screenpub --server https://screen.example.org", "screenpub --server https://relay.lan:8443 --ca-file my-ca.pem",
            "screensub --server https://relay.lan:8443 --ca-file my-ca.pem --token …",
        ],
        .archives: [
            "export SCREENRELAY_SECRET=$(head -c 32 /dev/urandom | base64)", "screenpub --port 8090 &", "auth=\"Authorization: Bearer $SCREENRELAY_SECRET\"",
            "curl -s -X POST -H \"$auth\" -d '{\"sessionId\":\"<sessionId>\",\"name\":\"standup\"}' http://127.0.0.1:8090/archive",
            "curl -s -X POST -H \"$auth\" http://127.0.0.1:8090/archive/<archiveId>/stop",
            "curl -s -H \"$auth\" \"http://127.0.0.1:8090/archive?sessionId=<sessionId>\"", "curl -s -H \"$auth\" http://127.0.0.1:8090/archive/<archiveId>",
            "curl -s -H \"$auth\" -o standup.webm http://127.0.0.1:8090/archive/<archiveId>/download",
            "curl -s -H \"$auth\" http://127.0.0.1:8090/archive/<archiveId>/metadata", "curl -s -X DELETE -H \"$auth\" http://127.0.0.1:8090/archive/<archiveId>",
            "screensub --input standup.webm --print-metadata",
        ],
        .hls: [
            "ffplay \"http://127.0.0.1:8090/hls/<sessionId>/index.m3u8?token=<viewer token>\"", "screenrelay --hls-dir /var/www/hls",
            "screenrelay --hls-push http://127.0.0.1:8081/hls",
            "screensub --hls \"http://127.0.0.1:8090/hls/<sessionId>/index.m3u8?token=<viewer token>\" --print-metadata",
            "curl -s -X POST -H \"$auth\" -d '{\"id\":\"chapter-2\",\"attributes\":{\"X-TITLE\":\"Q&A\"}}' http://127.0.0.1:8090/session/<sessionId>/marker",
        ],
        .whip: [
            "screenpub --codec vp9 --publish whip+https://sfu.example.org/whip/room1 --whip-token \"$WHIP_TOKEN\"",
            "screenpub --server https://relay.example.org --publish whip+https://sfu.example.org/whip/room1",
        ],
        .chat: [
            "screensub --server http://127.0.0.1:8090 --token <token> --chat", "echo \"back in 5\" | screensub --server http://127.0.0.1:8090 --token <token> --chat",
        ],
        .service: [
            "mkdir -p ~/.config/screenpub", "cp /usr/share/doc/screenpub/examples/screenpub.toml ~/.config/screenpub/config.toml",
            "systemctl --user import-environment DISPLAY XAUTHORITY", "systemctl --user enable --now screenpub.service",
            "journalctl --user -u screenpub -f", "systemctl --user reload screenpub",
        ],
        .control: [
            "screenpub status", "screenpub status --json", "screenpub pause", "screenpub resume", "screenpub mute", "screenpub unmute", "screenpub stop",
        ],
        .wayland: ["screenpub --fps 5", "screenpub --portal-source window", "screenpub --pipewire-node 57"],
        .masks: [
            "screenpub --mask-window KeePassXC --mask-window '*Bitwarden*' --mask-window 1Password",
            "screenpub --mask-region 1600,0,320,60 --mask-style pixelate",
        ],
    ]
}

/// Every command the README shows is run by a test, against real parts, with what it produces checked.
@Suite(.watchdog()) struct ReadmeExampleTests {
    @Test func everyReadmeCommandBelongsToAScenario() {
        let readme = Set(ReadmeExamples.commands)
        let listed = ReadmeScenario.commands.values.reduce(into: Set<String>()) { $0.formUnion($1) }
        #expect(readme.count >= 80, "the README's shell blocks were not read: \(readme.count) commands")
        #expect(readme.subtracting(listed).sorted() == [], "README commands no scenario runs")
        #expect(listed.subtracting(readme).sorted() == [], "scenario commands the README no longer shows")
    }

    @Test func theParserJoinsContinuedLinesAndDropsComments() {
        #expect(ReadmeExamples.parse("""
            text
            ```sh
            a --x '#not' # said
            # a comment
            b \\
              --y   # more
            ```
            ```
            output
            ```
            """) == ["a --x '#not'", "b --y"])
    }
}

/// A colour and where a recording shows it.
enum Pictures {
    /// Every decoded picture of a WebM, measured.
    static func measured<Measure>(_ path: String, _ measure: (VideoFrame) -> Measure) throws -> [Measure] {
        let reader = try WebMReader(path: path)
        let decoder = try makeVideoDecoder(for: reader.codec)
        var measures: [Measure] = []
        for frame in try reader.readAll() {
            try frame.payload.withUnsafeBytes { bytes in try decoder.decode(bytes) { measures.append(measure($0)) } }
        }
        return measures
    }

    /// ffprobe's value of `entries` for the first stream of `kind` (v, a, s).
    static func probe(_ path: String, _ kind: String, _ entries: String) async throws -> String {
        let outcome = try await ChildProcess.run(
            "/usr/bin/ffprobe", ["-v", "error", "-select_streams", "\(kind):0", "-show_entries", "stream=\(entries)", "-of", "csv=p=0", path], timeout: 30)
        return outcome.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
