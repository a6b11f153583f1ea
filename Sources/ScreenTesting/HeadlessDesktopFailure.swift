/// Why one of the tests' headless desktops (``HeadlessMutter``, ``HeadlessSway``, ``HeadlessKWin``) did not come up.
public struct HeadlessDesktopFailure: Error, CustomStringConvertible {
    public let description: String
    /// Not installed, or it cannot start on this machine: its tests can only be skipped, saying why.
    public var cannotStart = false

    public init(description: String, cannotStart: Bool = false) {
        self.description = description
        self.cannotStart = cannotStart
    }
}

// Only where Swift Testing is (the tests' builds): the benchmarks' tools link ScreenTesting in the release build,
// whose static Swift runtime has no Testing module.
#if canImport(Testing)
import Testing

extension HeadlessDesktopFailure {
    /// The desktop `start` brings up, or the test is skipped with the reason where it cannot start here.
    public static func startedOrSkipped<Desktop>(_ name: String, _ start: () async throws -> Desktop) async throws -> Desktop {
        do {
            return try await start()
        } catch let failure as HeadlessDesktopFailure where failure.cannotStart {
            try Test.cancel("\(name) cannot start here: \(failure.description)")
        }
    }
}
#endif
