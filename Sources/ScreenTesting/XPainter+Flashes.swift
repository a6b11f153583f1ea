import Foundation
public import ScreenMedia

extension XPainter {
    /// Paints `rect` of `window` white at each of `instants` (``MonotonicClock`` nanoseconds) for `milliseconds`,
    /// black again after: the flashes an A/V measure pairs with beeps played at the same instants. The last
    /// millisecond before each is waited busily (sleeping is not that precise). Returns when each was painted.
    @discardableResult
    public func flash(
        window: UInt, _ rect: PixelRect, at instants: [UInt64], milliseconds: Int = 150, clock: MonotonicClock = MonotonicClock()
    ) async throws -> [UInt64] {
        let black = XPainter.pixel(red: 0, green: 0, blue: 0), white = XPainter.pixel(red: 255, green: 255, blue: 255)
        var painted: [UInt64] = []
        for instant in instants {
            while clock.nanoseconds(fromTicks: clock.now()) + 2_000_000 < instant { try await Task.sleep(for: .milliseconds(1)) }
            while clock.nanoseconds(fromTicks: clock.now()) < instant {}
            fill(window: window, rect, color: white)
            sync()
            painted.append(clock.nanoseconds(fromTicks: clock.now()))
            try await Task.sleep(for: .milliseconds(milliseconds))
            fill(window: window, rect, color: black)
            sync()
        }
        return painted
    }
}
