import Foundation
import ScreenCapturePipeWire
import ScreenTesting
import Testing

/// Asking a real compositor to repaint (``CompositorRepaint``): sway has wlr-layer-shell and repaints; mutter has
/// none and says so; with no compositor the reason is said, and nothing waits longer than asked.
@Suite(.watchdog()) struct CompositorRepaintTests {
    @Test func swayRepaintsAndMutterHasNoLayerShell() async throws {
        let sway = try await HeadlessDesktopFailure.startedOrSkipped("sway") { try await HeadlessSway() }
        #expect(CompositorRepaint.request(displayName: sway.socket, timeout: 2) == .repainted)

        let mutter = try await HeadlessDesktopFailure.startedOrSkipped("mutter") { try await HeadlessMutter() }
        let outcome = CompositorRepaint.request(displayName: mutter.pipewire.runtimeDirectory + "/wayland-0", timeout: 2)
        #expect(outcome == .unavailable("the Wayland compositor offers no wlr-layer-shell"), "\(outcome)")
    }

    @Test func withNoCompositorTheReasonIsSaidAtOnce() {
        let started = ContinuousClock.now
        let outcome = CompositorRepaint.request(displayName: "/nonexistent/wayland-9", timeout: 2)
        #expect(outcome == .unavailable("no Wayland compositor answers at /nonexistent/wayland-9"), "\(outcome)")
        #expect(ContinuousClock.now - started < .seconds(2))
    }
}
