import Foundation
public import ScreenMedia

/// `Tests/Fixtures/gtk-test-window.py` on a Wayland compositor: a fullscreen GTK 3 window, left half ``red``,
/// right half ``blue``; with `clock`, a white 16×16 block near the top-left corner moves every second.
public enum GTKTestWindow {
    public static let red: (r: UInt8, g: UInt8, b: UInt8) = (255, 0, 0)
    public static let blue: (r: UInt8, g: UInt8, b: UInt8) = (0, 0, 255)

    /// Whether `picture` shows the window where it belongs, at any size: red low in the left half, blue low in the
    /// right.
    public static func isShown(in picture: VideoFrame) -> Bool {
        TestPattern.difference(picture, x: picture.width / 12, y: picture.height * 5 / 6, red) <= 16
            && TestPattern.difference(picture, x: picture.width * 11 / 12, y: picture.height * 5 / 6, blue) <= 16
    }

    /// Starts the window with a compositor's client `environment`; returns once it was drawn.
    public static func show(environment: [String: String], clock: Bool = false) async throws -> ChildProcess {
        let window = try ChildProcess(
            "/usr/bin/python3", [TestFixtures.directory + "/gtk-test-window.py"] + (clock ? ["--clock"] : []), environment: environment)
        guard try await eventually(20, { window.outputSoFar.contains("shown") || window.hasExited }), !window.hasExited else {
            window.endInBackground(signal: SIGKILL)
            throw ChildProcess.Failure(description: "the GTK test window did not show: \(window.errorsSoFar.suffix(800))")
        }
        return window
    }
}
