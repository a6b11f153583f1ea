import Foundation
import ScreenMedia

/// Draws a ``TextScene`` on an X display from a thread of its own (an X connection belongs to one thread): the
/// whole scene first, then a change every `interval` seconds, until ``stop()``.
public final class TextSceneDriver: Sendable {
    private let stopped = Locked(false)
    private let finished = OneShotEvent()
    /// Changes drawn so far.
    public var steps: Int { counter.value }
    private let counter = Locked(0)

    public init(_ scene: TextScene, display: String, interval: Double) throws {
        let opened = Locked<(any Error)??>(nil)
        let ready = DispatchSemaphore(value: 0)
        let thread = Thread { [stopped, finished, counter] in
            defer { finished.signal() }
            let painter: XPainter
            do {
                painter = try XPainter(displayName: display)
                opened.withLock { $0 = .some(nil) }
                ready.signal()
            } catch {
                opened.withLock { $0 = .some(error) }
                ready.signal()
                return
            }
            let window = painter.createWindow(PixelRect(x: 0, y: 0, width: scene.width, height: scene.height), color: scene.background)
            scene.drawWhole(painter, window, step: 0)
            var step = 0
            while !stopped.value {
                Thread.sleep(forTimeInterval: interval)
                guard scene.content != .idle else { continue }
                step += 1
                scene.drawChange(painter, window, step: step)
                counter.withLock { $0 = step }
            }
            painter.destroy(window: window)
            painter.sync()
        }
        thread.start()
        ready.wait()
        if case .some(.some(let error)) = opened.value { throw error }
    }

    /// Stops drawing; returns once the thread has let its connection go.
    public func stop() async {
        stopped.withLock { $0 = true }
        await finished.wait()
    }
}
