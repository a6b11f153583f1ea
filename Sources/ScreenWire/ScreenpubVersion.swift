/// The version of screenpub, screenrelay and screensub: shown by `--version`, sent as the client name in
/// `hello` and written into the .deb by `make deb` (which reads it from `screenpub --version`).
public enum ScreenpubVersion {
    public static let current = "0.1.0"
}
