import Dispatch
import Foundation
import ScreenMedia
import ScreenRecording
import ScreenSession
import ScreenTesting
import ScreenTransportClient
import Testing

@testable import ScreenRelay

#if canImport(Glibc)
import Glibc
#endif

/// One viewer cannot exhaust LL-HLS for everyone: a real relay fed by a publisher, attacked over raw sockets with
/// the blocking reloads that once took every waiting place of a session (hundreds every few seconds, each asking
/// for the farthest part it may, the sockets closed after 50 ms or held), while an honest player's blocking reloads
/// and a follower (screensub --hls's library) go on being answered.
@Suite(.watchdog(limit: .seconds(240))) struct HLSAttackTests {
    /// 2 s segments of 0.5 s parts: the first playlist within a few seconds, a wait of at most 9 s.
    static func relay() async throws -> RunningRelay {
        try await RunningRelay {
            $0.hlsSegmentSeconds = 2
            $0.hlsPartSeconds = 0.5
        }
    }

    /// A publisher of the test pattern, ten frames a second with a keyframe each second, until the task is
    /// cancelled; none while `paused`.
    static func publish(_ relay: RunningRelay, token: String, paused: Locked<Bool> = Locked(false)) throws -> Task<Void, any Error> {
        let frames = try TestMedia.encodedFrames(count: 10)
        return Task {
            try await RelayClient.connect(transport: relay.server.inProcessTransport, token: token, logger: quietLogger) { link, events in
                _ = try await events.nextControl()
                let stream = try await link.publishTestStream(events)
                let start = ContinuousClock.now
                var sequence: UInt64 = 0
                while !Task.isCancelled {
                    if !paused.value {
                        let frame = frames[Int(sequence % 10)]
                        var header = TestMedia.header(frame, streamId: stream.streamId, sequence: sequence)
                        header.captureTime = MediaTime(value: Int64((ContinuousClock.now - start) / .milliseconds(1)), timescale: 1000)
                        try await link.send(header, payload: frame.payload)
                        sequence += 1
                    }
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
        }
    }

    /// The session's packager once its playlist is served (the first request starts it and waits for two segments).
    static func playing(_ relay: RunningRelay, session: String, token: String) async throws -> HLSPackager {
        let first = try await RelayHTTPClient().send("GET", "\(relay.base)/hls/\(session)/stream.m3u8?token=\(token)")
        guard first.status == 200 else { throw TestFailure("the playlist answered \(first.status): \(String(decoding: first.body, as: UTF8.self))") }
        guard let packager = await relay.server.registry.hub(session)?.hls else { throw TestFailure("HLS is not running") }
        return packager
    }

    /// Polls `condition` (up to `seconds`); whether it came true.
    static func eventually(seconds: Double = 30, _ condition: () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while await !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// The farthest position a blocking reload may ask for now: two segments past the open one.
    static func farthest(_ packager: HLSPackager) -> String {
        let snapshot = packager.snapshot
        let live = snapshot.open?.sequence ?? (snapshot.segments.last?.sequence ?? 0) + 1
        return "_HLS_msn=\(live + 2)&_HLS_part=0"
    }

    /// The blocking reload a player at the live edge makes next, from the playlist as it is now.
    static func nextReload(_ packager: HLSPackager) throws -> String {
        let text = HLSPlaylist.media(
            packager.snapshot, targetDuration: packager.configuration.targetDuration, query: "",
            lowLatency: .init(partTarget: 0.5, partHoldBack: 1.5, skipBoundary: 48))
        let playlist = try #require(HLSPlaylistParser.media(text))
        return HLSPlaylistCursor.start(playlist).fetches(in: playlist).next.blockingQuery
    }

    // MARK: A client that leaves

    /// Hummingbird 2 does not cancel a handler when its client goes, nor does the channel close on the client's
    /// FIN (half-closure is allowed): without ``ClientGoneWatch`` such a request held its place to its deadline.
    /// Here the stream stands still, so nothing but the client's leaving can end the wait.
    @Test(arguments: [false, true])
    func aClientThatClosesItsConnectionGivesItsPlaceBackAtOnce(reset: Bool) async throws {
        let relay = try await Self.relay()
        let session = try await relay.createSession()
        let token = try await relay.token(session: session.sessionId, role: .subscriber)
        let paused = Locked(false)
        let publisher = try Self.publish(relay, token: session.token, paused: paused)
        defer { publisher.cancel() }
        let packager = try await Self.playing(relay, session: session.sessionId, token: token)
        paused.withLock { $0 = true }
        try await Task.sleep(for: .seconds(1))
        let reload = try Self.nextReload(packager)
        let socket = try #require(await RawHTTP.open(port: relay.port, "/hls/\(session.sessionId)/stream.m3u8?token=\(token)&\(reload)"))
        #expect(await Self.eventually { packager.waiting.count == 1 }, "the request waits")
        RawHTTP.close(socket, reset: reset)
        #expect(await Self.eventually { packager.waiting.count == 0 })
        #expect(packager.waiting.gone == 1, "given back because its client left, not answered nor expired")
        #expect(packager.waiting.clients == 0)

        // A request without a valid token is refused before it can wait.
        for query in ["", "?token=not-a-token"] {
            let refused = try #require(await RawHTTP.get(port: relay.port, "/hls/\(session.sessionId)/stream.m3u8\(query)\(query.isEmpty ? "?" : "&")\(reload)"))
            #expect(refused.status == 401)
        }
        #expect(packager.waiting.count == 0 && relay.server.metrics.value(.hlsWaitingPerClient) == 0)
    }

    /// Behind a proxy named with `--trust-proxy` each client it forwards has its own share; from anyone else,
    /// `X-Forwarded-For` is the client's own words: an attacker naming a new address each time is still one client.
    @Test(arguments: [false, true])
    func aForwardedClientHasItsOwnShareOnlyBehindATrustedProxy(trusted: Bool) async throws {
        let relay = try await RunningRelay {
            $0.hlsSegmentSeconds = 2
            $0.hlsPartSeconds = 0.5
            $0.trustedProxies = trusted ? ["127.0.0.1"] : []
        }
        let session = try await relay.createSession()
        let token = try await relay.token(session: session.sessionId, role: .subscriber)
        let publisher = try Self.publish(relay, token: session.token)
        defer { publisher.cancel() }
        let packager = try await Self.playing(relay, session: session.sessionId, token: token)
        let path = "/hls/\(session.sessionId)/stream.m3u8?token=\(token)&\(Self.farthest(packager))"
        let share = relay.server.configuration.hlsWaitingRequestsPerClient
        let sockets = await RawHTTP.offPool {
            (0..<(share + 4)).compactMap { index in RawHTTP.connect(port: relay.port, path, headers: ["X-Forwarded-For: 198.51.100.\(index)"]) }
        }
        defer { for fd in sockets { RawHTTP.close(fd) } }
        let (waiting, clients, refused) = trusted ? (share + 4, share + 4, 0) : (share, 1, 4)
        #expect(await Self.eventually {
            packager.waiting.count == waiting && packager.waiting.clients == clients
                && relay.server.metrics.value(.hlsWaitingPerClient) == refused
        }, "\(packager.waiting.count) waiting of \(packager.waiting.clients) clients, \(relay.server.metrics.value(.hlsWaitingPerClient)) refused")
    }

    // MARK: A refused player

    /// A follower (screensub --hls) refused with 503 — here because its own client's share of waiting places is
    /// taken — tries again after the server's Retry-After, says so in one line each time, and goes on once a place
    /// is free.
    @Test func aRefusedFollowerTriesAgainAndGoesOn() async throws {
        let relay = try await RunningRelay {
            $0.hlsSegmentSeconds = 2
            $0.hlsPartSeconds = 0.5
            $0.hlsWaitingRequestsPerClient = 1
        }
        let session = try await relay.createSession()
        let token = try await relay.token(session: session.sessionId, role: .subscriber)
        let publisher = try Self.publish(relay, token: session.token)
        defer { publisher.cancel() }
        let packager = try await Self.playing(relay, session: session.sessionId, token: token)
        // The one place of this token from 127.0.0.1, taken, and taken again whenever its part came (on a loaded
        // machine the follower may start after the farthest part allowed was already made).
        let retries = Locked<[String]>([])
        let holders = Locked<[Int32]>([])
        let holding = Task {
            while !Task.isCancelled, retries.value.isEmpty {
                if packager.waiting.count == 0,
                    let holder = await RawHTTP.open(port: relay.port, "/hls/\(session.sessionId)/stream.m3u8?token=\(token)&\(Self.farthest(packager))")
                {
                    holders.withLock { $0.append(holder) }
                }
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        defer { holding.cancel() }
        #expect(await Self.eventually { packager.waiting.count == 1 })
        let frames = Locked(0)
        var follower = HLSFollower(url: "\(relay.base)/hls/\(session.sessionId)/index.m3u8?token=\(token)")
        follower.onRetry = { line in retries.withLock { $0.append(line) } }
        let following = Task { [follower] in
            try await follower.run { event in if case .frame = event { frames.withLock { $0 += 1 } } }
        }
        defer { following.cancel() }
        #expect(await Self.eventually { !retries.value.isEmpty })
        let said = try #require(retries.value.first)
        #expect(said.contains("answered 503") && said.contains("the most one client may") && said.contains("trying again in 1 s"), "\(said)")
        #expect(!said.contains("\n") && !said.contains(token), "one line, without the token: \(said)")
        holding.cancel()
        _ = await holding.value
        for holder in holders.value { RawHTTP.close(holder) }
        let before = frames.value
        #expect(await Self.eventually { frames.value > before + 5 }, "it goes on once its place is free")
    }

    /// One that cannot reach the server tries for its retry time, then gives up with the reason.
    @Test func aFollowerThatCannotReachTheServerGivesUpAfterItsRetryTime() async throws {
        // A port nothing listens on: bound, never listened.
        let nowhere = try RefusingLoopbackPort()
        let port = nowhere.port
        let retries = Locked<[String]>([])
        var follower = HLSFollower(url: "http://127.0.0.1:\(port)/hls/s/index.m3u8?token=secret-ish")
        // Tries after 0.5, 1 and 2 s, then gives up (4 s more would pass 5 s): at least two tries even where a
        // refused connection takes a second on a busy machine.
        follower.retryFor = .seconds(5)
        follower.onRetry = { line in retries.withLock { $0.append(line) } }
        await #expect {
            try await follower.run { _ in }
        } throws: { error in
            "\(error)".contains("still failing after")
        }
        #expect(retries.value.count >= 2 && retries.value.allSatisfy { $0.contains("trying again in") && !$0.contains("secret-ish") }, "\(retries.value)")
    }

    // MARK: The attack

    enum Attacker: String, CaseIterable, CustomStringConvertible, Sendable {
        case viewerToken, noToken
        var description: String { rawValue }
    }

    @Test(arguments: Attacker.allCases)
    func oneViewerCannotExhaustLowLatencyHLSForEveryone(attacker: Attacker) async throws {
        let relay = try await Self.relay()
        let session = try await relay.createSession()
        let sessionId = session.sessionId
        // The link the attacker holds, which an honest viewer elsewhere (127.0.0.2) holds too; another viewer follows.
        let link = try await relay.token(session: sessionId, role: .subscriber)
        let followerToken = try await relay.token(session: sessionId, role: .subscriber)
        let publisher = try Self.publish(relay, token: session.token)
        defer { publisher.cancel() }
        let packager = try await Self.playing(relay, session: sessionId, token: followerToken)

        // The follower, as screensub --hls reads: segments and frames as they come.
        let followed = Locked<(segments: Int, frames: Int)>((0, 0))
        let retries = Locked<[String]>([])
        var follower = HLSFollower(url: "\(relay.base)/hls/\(sessionId)/index.m3u8?token=\(followerToken)")
        follower.onRetry = { line in retries.withLock { $0.append(line) } }
        let failure = Locked<String?>(nil)
        let following = Task { [follower] in
            do {
                try await follower.run { event in
                    followed.withLock { counts in
                        switch event {
                        case .segment: counts.segments += 1
                        case .frame: counts.frames += 1
                        case .dateRange: break
                        }
                    }
                }
            } catch {
                if !Task.isCancelled { failure.withLock { $0 = "\(error)" } }
            }
        }
        defer { following.cancel() }
        #expect(await Self.eventually { followed.value.frames > 0 }, "the follower reads frames")

        // The attack: every 3 s, 520 blocking reloads for the farthest part allowed, from 127.0.0.1, closed after
        // 50 ms; and 520 more held open until the next wave.
        let query = attacker == .viewerToken ? "token=\(link)&" : ""
        let attackClient = HLSWaitingRequests.Client(token: link, address: "127.0.0.1")
        let attack = RawHTTP.Attack(
            port: relay.port, waves: 3, period: 3, perWave: 520, closeAfter: 0.05,
            path: { "/hls/\(sessionId)/stream.m3u8?\(query)\(Self.farthest(packager))" })
        let attackDone = attack.start()
        let attackBegan = followed.value

        // Meanwhile: an honest player of the same link from another address makes its blocking reloads, one after
        // the other; and the attacker's share of places is watched.
        var honest: [Int] = []
        var mostHeldByAttacker = 0
        var mostWaiting = 0
        while !attack.finished {
            mostHeldByAttacker = max(mostHeldByAttacker, packager.waiting.count(of: attackClient))
            mostWaiting = max(mostWaiting, packager.waiting.count)
            let reload = try Self.nextReload(packager)
            let answer = await RawHTTP.get(port: relay.port, "/hls/\(sessionId)/stream.m3u8?token=\(link)&\(reload)", from: "127.0.0.2")
            honest.append(answer?.status ?? 0)
        }
        let statuses = await attackDone.value
        let attackEnded = followed.value

        #expect(!honest.isEmpty && honest.allSatisfy { $0 == 200 }, "the honest player's blocking reloads: \(honest)")
        #expect(attackEnded.segments > attackBegan.segments && attackEnded.frames > attackBegan.frames, "the follower kept reading: \(attackBegan) → \(attackEnded)")
        #expect(failure.value == nil, "the follower gave up: \(failure.value ?? "")")
        // (A retry or two of the follower's is allowed: it is what a player does; they are said here.)
        if !retries.value.isEmpty { print("the follower tried again: \(retries.value)") }
        switch attacker {
        case .viewerToken:
            // The attacker had its share of places at most; the rest of its requests were refused at once.
            let share = relay.server.configuration.hlsWaitingRequestsPerClient
            #expect(mostHeldByAttacker <= share, "the attacker held \(mostHeldByAttacker) places")
            #expect(relay.server.metrics.value(.hlsWaitingPerClient) > 0, "refused at once, and counted: \(statuses)")
            #expect(relay.server.metrics.value(.hlsWaiting) == 0, "the session's total was never reached")
        case .noToken:
            // (0: not answered yet when the attacker looked, on a busy machine.)
            #expect(statuses[401, default: 0] > 0 && Set(statuses.keys).isSubset(of: [401, 0]), "without a token: \(statuses)")
            #expect(mostWaiting <= 2 && relay.server.metrics.value(.hlsWaitingPerClient) == 0, "no request without a token waited")
        }
        // Every place taken is given back.
        #expect(await Self.eventually { packager.waiting.count(of: attackClient) == 0 })
    }
}

/// HTTP/1.1 over plain blocking sockets, as an attacker writes it: requests sent and sockets closed (or reset)
/// whenever it likes. Blocking calls run on threads of their own, never on the test's task executor.
enum RawHTTP {
    /// Runs `work` on a Dispatch thread.
    static func offPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }

    /// A socket connected to 127.0.0.1:`port` from `source` (any loopback address; nil: the usual one), with the
    /// request for `path` sent; nil when it could not connect.
    static func connect(port: Int, _ path: String, from source: String? = nil, headers: [String] = [], timeout: Double = 20) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var wait = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        func address(_ text: String, port: Int) -> sockaddr_in {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, text, &address.sin_addr)
            return address
        }
        func call(_ address: sockaddr_in, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
            withUnsafePointer(to: address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        }
        if let source, call(address(source, port: 0), { bind(fd, $0, $1) }) != 0 {
            Glibc.close(fd)
            return nil
        }
        guard call(address("127.0.0.1", port: port), { Glibc.connect(fd, $0, $1) }) == 0 else {
            Glibc.close(fd)
            return nil
        }
        let fields = headers.map { $0 + "\r\n" }.joined()
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(fields)Connection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else {
            Glibc.close(fd)
            return nil
        }
        return fd
    }

    /// Reads the answer to its end (the relay closes after it); its status and body, nil when none came.
    static func read(_ fd: Int32) -> (status: Int, body: String)? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let parts = text.split(separator: " ", maxSplits: 2)
        guard text.hasPrefix("HTTP/1.1 "), parts.count >= 2, let status = Int(parts[1]) else { return nil }
        return (status, text.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n"))
    }

    static func close(_ fd: Int32, reset: Bool = false) {
        if reset {
            // A zero linger: the close sends a reset, not a FIN.
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
        Glibc.close(fd)
    }

    static func open(port: Int, _ path: String, from source: String? = nil) async -> Int32? {
        await offPool { connect(port: port, path, from: source) }
    }

    /// One request and its whole answer.
    static func get(port: Int, _ path: String, from source: String? = nil) async -> (status: Int, body: String)? {
        await offPool {
            guard let fd = connect(port: port, path, from: source) else { return nil }
            defer { close(fd) }
            return read(fd)
        }
    }

    /// Waves of requests on a thread of its own: each wave `perWave` sockets whose requests are sent, then closed
    /// after `closeAfter` seconds, and `perWave` more held open until the next wave, whose answers (those that came
    /// by then) are counted by status.
    final class Attack: Sendable {
        let port: Int, waves: Int, period: Double, perWave: Int, closeAfter: Double
        let path: @Sendable () -> String
        private let done = Locked(false)

        init(port: Int, waves: Int, period: Double, perWave: Int, closeAfter: Double, path: @escaping @Sendable () -> String) {
            (self.port, self.waves, self.period, self.perWave, self.closeAfter, self.path) = (port, waves, period, perWave, closeAfter, path)
        }

        var finished: Bool { done.value }

        /// Starts the attack; the statuses of the held requests' answers (0: none by the next wave), once it ends.
        func start() -> Task<[Int: Int], Never> {
            Task {
                let statuses = await RawHTTP.offPool { [self] in run() }
                done.withLock { $0 = true }
                return statuses
            }
        }

        private func run() -> [Int: Int] {
            var statuses: [Int: Int] = [:]
            var held: [Int32] = []
            func collect() {
                for fd in held {
                    // What came by now, without waiting for more.
                    var chunk = [UInt8](repeating: 0, count: 512)
                    let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                    let head = count > 12 ? String(decoding: chunk[..<count], as: UTF8.self) : ""
                    let status = head.hasPrefix("HTTP/1.1 ") ? Int(head.dropFirst(9).prefix(3)) ?? 0 : 0
                    statuses[status, default: 0] += 1
                    RawHTTP.close(fd)
                }
                held = []
            }
            for wave in 0..<waves {
                let began = Date()
                let path = path()
                let brief = (0..<perWave).compactMap { _ in RawHTTP.connect(port: port, path) }
                Thread.sleep(forTimeInterval: closeAfter)
                for fd in brief { RawHTTP.close(fd) }
                collect()
                held = (0..<perWave).compactMap { _ in RawHTTP.connect(port: port, path) }
                if wave < waves - 1 { Thread.sleep(forTimeInterval: max(0, period - Date().timeIntervalSince(began))) }
            }
            Thread.sleep(forTimeInterval: period)
            collect()
            return statuses
        }
    }
}
