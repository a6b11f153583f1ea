import Foundation

/// Where a relay's secret comes from, for the relay and for the admin commands that call its API: `--secret-file`,
/// else `$SCREENRELAY_SECRET`, else `$XDG_CONFIG_HOME/screenrelay/secret` when that file exists.
public enum RelaySecret {
    /// The default secret file, beside the default configuration file.
    public static func defaultFile(environment: [String: String]) -> String {
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.config"
        return "\(base)/screenrelay/secret"
    }

    /// The secret, or a sentence saying where none was found or why it is unusable.
    public static func read(secretFile: String?, environment: [String: String]) -> Result<String, RelayError> {
        let defaultFile = defaultFile(environment: environment)
        let fromEnvironment = environment["SCREENRELAY_SECRET"] ?? ""
        let file = secretFile ?? (fromEnvironment.isEmpty && FileManager.default.fileExists(atPath: defaultFile) ? defaultFile : nil)
        let secret: String
        let source: String
        if let file {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                let reason = FileManager.default.fileExists(atPath: file) ? "it cannot be read (check its permissions)" : "there is no such file"
                return .failure(RelayError(.badSecret, "cannot read the relay secret from \(file): \(reason)"))
            }
            secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
            source = file
        } else {
            guard !fromEnvironment.isEmpty else {
                return .failure(
                    RelayError(
                        .badSecret,
                        "no relay secret is set: put at least 32 random bytes in \(defaultFile) (`head -c 32 /dev/urandom | base64 > \(defaultFile)`; mode 0600), or give --secret-file or $SCREENRELAY_SECRET"))
            }
            secret = fromEnvironment
            source = "$SCREENRELAY_SECRET"
        }
        guard secret.utf8.count >= 32 else {
            return .failure(RelayError(.badSecret, "the relay secret in \(source) is \(secret.utf8.count) bytes long; it must be at least 32 (`head -c 32 /dev/urandom | base64`)"))
        }
        return .success(secret)
    }
}
