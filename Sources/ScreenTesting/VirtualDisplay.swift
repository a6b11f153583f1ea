import Foundation

/// A private Xvfb server for tests and demos, on a display number Xvfb picks itself (`-displayfd`), stopped on
/// `stop()` or deinit.
public final class VirtualDisplay: Sendable {
    public let name: String
    public let width: Int
    public let height: Int
    private let process: Process

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public init(width: Int = 1280, height: Int = 720) throws {
        self.width = width
        self.height = height
        let xvfb = ["/usr/bin/Xvfb", "/usr/local/bin/Xvfb"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let xvfb else { throw Failure(description: "Xvfb is not installed (apt-get install xvfb)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: xvfb)
        process.arguments = ["-displayfd", "1", "-screen", "0", "\(width)x\(height)x24", "-nolisten", "tcp", "-noreset"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Xvfb writes its display number and a newline once it accepts connections.
        var number = ""
        let handle = output.fileHandleForReading
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let byte = handle.readData(ofLength: 1)
            if byte.isEmpty { break }
            if byte == Data("\n".utf8) { break }
            number += String(decoding: byte, as: UTF8.self)
        }
        guard !number.isEmpty, Int(number) != nil else {
            process.terminate()
            throw Failure(description: "Xvfb did not start")
        }
        self.process = process
        self.name = ":\(number)"
    }

    /// Stops the server (as if it crashed, for tests of a vanished display) and waits for it to exit.
    public func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    deinit { stop() }
}
