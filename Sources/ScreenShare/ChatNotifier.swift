import Foundation
import Logging
import ScreenWire

/// What screenpub does with signals while it shares: logs chat lines (and other signal types) and, when asked
/// and `notify-send` is installed, shows chat lines as desktop notifications.
struct ChatNotifier: Sendable {
    let logger: Logger
    let notifySend: String?

    init(logger: Logger, notifies: Bool, environment: [String: String]) {
        self.logger = logger
        let path = environment["PATH"] ?? "/usr/bin:/bin"
        notifySend = notifies
            ? path.split(separator: ":").map { "\($0)/notify-send" }.first { FileManager.default.isExecutableFile(atPath: $0) }
            : nil
        if notifies, notifySend == nil { logger.warning("--notify-chat: notify-send is not installed (Debian: libnotify-bin); chat is only logged") }
    }

    func receive(_ signal: Signal) {
        // Remote text: escaped, so that it cannot forge log lines.
        let sender = signal.senderName.escapingControlCharacters
        guard signal.type == "chat" else {
            logger.info("signal \(signal.type) from \(sender): \(signal.data.escapingControlCharacters)")
            return
        }
        logger.info("chat <\(sender)> \(signal.data.escapingControlCharacters)")
        guard let notifySend else { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: notifySend)
        process.arguments = ["--app-name=screenpub", "--", "screenpub chat: \(sender)", signal.data]
        // Reaped when it ends; a failing notification only costs a debug line.
        process.terminationHandler = { _ in }
        do { try process.run() } catch { logger.debug("notify-send failed: \(error)") }
    }
}
