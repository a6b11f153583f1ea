import ScreenCodec

/// The settings only a restart changes: where the stream goes and how it gets there, the codec, the relay inside
/// screenpub, the sound, the logs. A reload (SIGHUP) that changes one of them warns that it waits for the next start.
public struct StartupSettings: Sendable, Equatable {
    var codec: VideoCodecChoice
    var rendition: RenditionChoice
    var chroma: ChromaChoice
    var output: String?
    var server: String?
    var to: [String]
    var token: String?
    var port: Int
    var reconnect: Bool
    var dataDirectory: String?
    var controlSocket: String?
    var logFormat: String
    var notifyChat: Bool
    var overwrite: Bool
    var captureRetry: Double
    var pipewireRemote: Int32?
    var host: String
    var publicURL: String?
    var tlsCertificate: String?
    var tlsKey: String?
    var caFile: String?
    var audio: String
    var audioBitrate: Int
    var audioOptional: Bool

    init(_ settings: ShareSettings) {
        codec = settings.codec
        rendition = settings.rendition
        chroma = settings.chroma
        output = settings.output
        server = settings.server
        to = settings.to
        token = settings.token
        port = settings.port
        reconnect = settings.reconnect
        dataDirectory = settings.dataDir
        controlSocket = settings.controlSocket
        logFormat = settings.logFormat
        notifyChat = settings.notifyChat
        overwrite = settings.overwrite
        captureRetry = settings.captureRetry
        pipewireRemote = settings.pipewireRemote
        host = settings.host
        publicURL = settings.publicURL
        tlsCertificate = settings.tlsCert
        tlsKey = settings.tlsKey
        caFile = settings.caFile
        audio = settings.audio
        audioBitrate = settings.audioBitrate
        audioOptional = settings.audioOptional
    }

    /// The options, by their flag's name and in alphabetical order, whose value `next` changes.
    public func changedOptions(in next: StartupSettings) -> [String] {
        var changed: [String] = []
        func compare<Value: Equatable>(_ option: String, _ value: KeyPath<StartupSettings, Value>) {
            if self[keyPath: value] != next[keyPath: value] { changed.append(option) }
        }
        compare("audio", \.audio)
        compare("audio-bitrate", \.audioBitrate)
        compare("audio-optional", \.audioOptional)
        compare("ca-file", \.caFile)
        compare("capture-retry", \.captureRetry)
        compare("chroma", \.chroma)
        compare("rendition", \.rendition)
        compare("codec", \.codec)
        compare("control-socket", \.controlSocket)
        compare("data-dir", \.dataDirectory)
        compare("host", \.host)
        compare("log-format", \.logFormat)
        compare("notify-chat", \.notifyChat)
        compare("output", \.output)
        compare("overwrite", \.overwrite)
        compare("pipewire-remote", \.pipewireRemote)
        compare("port", \.port)
        compare("public-url", \.publicURL)
        compare("reconnect", \.reconnect)
        compare("server", \.server)
        compare("tls-cert", \.tlsCertificate)
        compare("tls-key", \.tlsKey)
        compare("to", \.to)
        compare("token", \.token)
        return changed
    }
}
