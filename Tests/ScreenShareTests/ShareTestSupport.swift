import Foundation
import Logging
import ScreenMedia
import ScreenShare
import ScreenTesting
import ScreenTransport
import ServiceLifecycle
import Synchronization

/// A destination that keeps what it is sent (`collect:NAME`): a test double for a network or file
/// destination, registered the way a real new kind would be.
final class CollectingDestination: StreamDestination {
    let endpoint: String
    let sink = CollectingSink()
    private let announcements = Mutex<[StreamAnnouncement]>([])

    init(endpoint: String) { self.endpoint = endpoint }

    static let kind = DestinationKind(.init(rawValue: "collect"), schemes: ["collect"]) { url, _ in CollectingDestination(endpoint: url) }

    func makeSink() throws -> any EncodedFrameSink { sink }
    func announce(_ announcement: StreamAnnouncement) { announcements.withLock { $0.append(announcement) } }
    var announced: [StreamAnnouncement] { announcements.withLock { $0 } }
    var status: DestinationStatus { DestinationStatus(kind: .init(rawValue: "collect"), endpoint: endpoint) }
}

/// The destination kinds of a test share: screenpub's and `collect:`.
let testKinds = ShareDestinations.all + [CollectingDestination.kind]

/// The test pattern instead of a display, made as many times as the capture starts.
func testPatternSources(failFirst failures: Int = 0, with error: any Error = CancellationError()) -> (FrameSourceFactory, Counter) {
    let made = Counter()
    let factory = FrameSourceFactory { _, _ in
        let attempt = made.increment()
        if attempt <= failures { throw error }
        return (TestPatternFrameSource(), "the test pattern")
    }
    return (factory, made)
}

/// One running share in a ServiceGroup, as screenpub runs it, with the test pattern as its source.
struct RunningShare {
    let share: Share
    let collected: [String: CollectingDestination]
    let ended: Task<ShareError?, Never>
    let printed: PrintedLines

    static func start(
        _ settings: ShareSettings, environment: [String: String] = [:], sources: FrameSourceFactory = testPatternSources().0,
        reread: (@Sendable () -> Result<ShareConfiguration, ShareError>)? = nil
    ) async throws -> RunningShare {
        let made = Mutex<[String: CollectingDestination]>([:])
        let kind = DestinationKind(.init(rawValue: "collect"), schemes: ["collect"]) { url, context in
            let destination = try await CollectingDestination.kind.make(url, context) as! CollectingDestination
            made.withLock { $0[url] = destination }
            return destination
        }
        let printedBox = PrintedLines()
        let share = Share(
            configuration: try ShareConfiguration(settings, environment: ShareEnvironment(variables: environment), destinationKinds: testKinds), logger: Logger(label: "test.share"),
            sources: sources, destinationKinds: ShareDestinations.all + [kind],
            rereadSettings: reread ?? { .failure(ShareError(.invalidSettings, "no settings to read")) },
            output: { printedBox.append($0) })
        let services = try await share.prepare()
        let ended = Task<ShareError?, Never> {
            let group = ServiceGroup(configuration: .init(services: services, logger: Logger(label: "test.group")))
            do {
                try await group.run()
                return share.finish(nil)
            } catch {
                return share.finish(error)
            }
        }
        return RunningShare(share: share, collected: made.withLock { $0 }, ended: ended, printed: printedBox)
    }
}

extension RunningShare {
    /// Runs `body` with a started share and stops the share afterwards, also when `body` throws, so that a
    /// failed expectation never leaves a share running. Returns how the share ended.
    @discardableResult
    static func with(
        _ settings: ShareSettings, environment: [String: String] = [:], sources: FrameSourceFactory = testPatternSources().0,
        reread: (@Sendable () -> Result<ShareConfiguration, ShareError>)? = nil,
        _ body: (RunningShare) async throws -> Void
    ) async throws -> ShareError? {
        let running = try await start(settings, environment: environment, sources: sources, reread: reread)
        do {
            try await body(running)
        } catch {
            running.share.handle(.stop)
            _ = await running.ended.value
            throw error
        }
        running.share.handle(.stop)
        return await running.ended.value
    }
}

/// Lines a share printed for scripts.
final class PrintedLines: Sendable {
    private let storage = Mutex<[String]>([])
    func append(_ line: String) { storage.withLock { $0.append(line) } }
    var lines: [String] { storage.withLock { $0 } }
}

extension ShareSettings {
    /// Settings for a share to the given destinations, capturing fast so that tests are quick.
    static func testing(to destinations: [String], fps: Double = 20) -> ShareSettings {
        var settings = ShareSettings()
        settings.to = destinations
        settings.fps = fps
        settings.bitrate = 500
        return settings
    }
}

/// How many times something happened, from any thread.
final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func increment() -> Int { value.add(1, ordering: .relaxed).newValue }
    var count: Int { value.load(ordering: .relaxed) }
}

/// A viewer's renderer that only counts the pictures it is given to show.
final class ShownPictures: VideoRenderer, Sendable {
    private let shown = Counter()
    func render(_ frame: VideoFrame) throws { _ = shown.increment() }
    var count: Int { shown.count }
}
