import Foundation
import MetricsTestKit
import ScreenMedia
@testable import ScreenRelay
import ScreenSession
import ScreenTesting
import ScreenTransport
import ScreenTransportClient
import ScreenWire
import Testing

/// `/metrics` rendered from the relay's own Prometheus registry (swift-metrics into swift-prometheus): every series
/// named, described and typed as before, with the values of what happened, and each relay counting apart.
@Suite(.watchdog()) struct RelayMetricsTests {
    /// An exposition read back: each family's HELP and TYPE, each series' value (`name` or `name{label="value"}`).
    struct Exposition {
        var help: [String: String] = [:]
        var type: [String: String] = [:]
        var values: [String: Double] = [:]

        init(_ text: String) {
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ", maxSplits: 3).map(String.init)
                if words.count == 4, words[0] == "#", words[1] == "HELP" {
                    help[words[2]] = words[3]
                } else if words.count == 4, words[0] == "#", words[1] == "TYPE" {
                    type[words[2]] = words[3]
                } else if let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) {
                    values[String(line[..<space])] = value
                }
            }
        }

        /// The values of a family's series, by the value of their label.
        func series(_ family: String, _ label: String) -> [String: Double] {
            let prefix = "\(family){\(label)=\""
            return Dictionary(uniqueKeysWithValues: values.filter { $0.key.hasPrefix(prefix) }.map { (String($0.key.dropFirst(prefix.count).dropLast(2)), $0.value) })
        }
    }

    @Test func everySeriesHasItsNameHelpAndTypeFromTheStart() {
        let shown = Exposition(RelayMetrics().exposition())
        for name in RelayMetrics.Name.allCases {
            let (series, help) = name.exposed
            #expect(shown.help[series] == help, "\(series)")
            #expect(shown.type[series] == (name.isGauge ? "gauge" : "counter"), "\(series)")
            #expect(shown.values[series] == 0, "\(series)")
        }
        #expect(shown.help["screenrelay_refused_total"] == "What each limit refused: connections, requests, messages, sessions, streams.")
        #expect(shown.type["screenrelay_refused_total"] == "counter")
        #expect(shown.series("screenrelay_refused_total", "limit") == Dictionary(uniqueKeysWithValues: RelayLimit.allCases.map { ($0.rawValue, 0) }))
        // A labelled family shows once something is counted in it.
        for family in RelayMetrics.Family.allCases { #expect(shown.type[family.rawValue] == nil, "\(family)") }
    }

    @Test func whatWasCountedIsShown() {
        let metrics = RelayMetrics()
        for _ in 0..<3 { metrics.add(.framesIn) }
        metrics.add(.bytesIn, 1500)
        metrics.set(.sessions, 2)
        metrics.add(.connections)
        metrics.add(.connections)
        metrics.add(.connections, -1)
        metrics.refused(.host)
        metrics.refused(.host)
        metrics.add(.keyframeRequestsByCause, KeyframeCause.newSubscriber.rawValue, 2)
        metrics.add(.subscribersByLayer, "0", 3)
        metrics.add(.subscribersByLayer, "waiting")
        metrics.add(.subscribersByLayer, "waiting", -1)
        metrics.add(.publisherTargetKbps, "s/1", 800)
        var counters = RouterCounters()
        counters.droppedFrames = 4
        counters.refused[.frameRate] = 5
        counters.keyframeRequestsByCause[.subscriberBehind] = 1
        metrics.fold(counters, since: RouterCounters())

        let shown = Exposition(metrics.exposition())
        #expect(shown.values["screenrelay_frames_in_total"] == 3)
        #expect(shown.values["screenrelay_bytes_in_total"] == 1500)
        #expect(shown.values["screenrelay_sessions"] == 2)
        #expect(shown.values["screenrelay_connections"] == 1)
        #expect(shown.values["screenrelay_frames_dropped_total"] == 4)
        #expect(shown.series("screenrelay_refused_total", "limit").filter { $0.value != 0 } == ["host": 2, "frame_rate": 5])
        #expect(shown.series("screenrelay_keyframe_requests_by_cause_total", "cause") == ["new_subscriber": 2, "subscriber_behind": 1])
        // A gauge back at 0 (no subscription waits any more) leaves the exposition.
        #expect(shown.series("screenrelay_subscribers", "layer") == ["0": 3])
        #expect(shown.series("screenrelay_publisher_target_kbps", "stream") == ["s/1": 800])
        for family in [RelayMetrics.Family.keyframeRequestsByCause, .subscribersByLayer, .publisherTargetKbps] {
            #expect(shown.help[family.rawValue] == family.help)
            #expect(shown.type[family.rawValue] == (family.isGauge ? "gauge" : "counter"))
        }
        #expect(shown.type["screenrelay_publisher_estimated_kbps"] == nil, "nothing reported")
        // What tests and tools read is what /metrics shows.
        #expect(metrics.value(.framesIn) == 3 && metrics.value(.connections) == 1 && metrics.value(.host) == 2)
        #expect(metrics.value(.keyframeRequestsByCause, "new_subscriber") == 2 && metrics.value(.subscribersByLayer, "waiting") == 0)
    }

    @Test func eachRelayCountsApart() {
        let one = RelayMetrics()
        let other = RelayMetrics()
        one.add(.framesIn, 7)
        one.refused(.origin)
        #expect(one.value(.framesIn) == 7 && one.value(.origin) == 1)
        #expect(other.value(.framesIn) == 0 && other.value(.origin) == 0)
    }

    @Test func everyValueIsWrittenAsAWholeNumber() {
        let metrics = RelayMetrics()
        metrics.set(.sessions, 2)
        metrics.set(.queuedBytes, 1 << 30)
        metrics.add(.subscribersByLayer, "1", 3)
        metrics.add(.framesIn, 7)
        let lines = metrics.exposition().split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(lines.contains("screenrelay_sessions 2") && lines.contains("screenrelay_queued_bytes 1073741824"), "gauges as before, not 2.0")
        #expect(lines.contains("screenrelay_frames_in_total 7") && lines.contains("screenrelay_subscribers{layer=\"1\"} 3"))
        for line in lines { #expect(Int(line.split(separator: " ").last ?? "") != nil, "\(line)") }
    }

    @Test func aSampledGaugeIsReadWhenShown() {
        let metrics = RelayMetrics()
        let queued = Locked(0)
        metrics.sample(.queuedBytes) { queued.value }
        queued.withLock { $0 = 4096 }
        #expect(Exposition(metrics.exposition()).values["screenrelay_queued_bytes"] == 4096)
        queued.withLock { $0 = 0 }
        #expect(metrics.value(RelayMetrics.Name.queuedBytes) == 0)
    }

    @Test func anotherFactoryGetsTheSameFigures() throws {
        let elsewhere = TestMetrics()
        let metrics = RelayMetrics(alsoReportingTo: elsewhere)
        metrics.add(.framesOut, 2)
        metrics.add(.connections)
        metrics.refused(.signalRate)
        metrics.add(.subscribersByLayer, "1", 2)
        #expect(elsewhere.counterTotal(label: "screenrelay_frames_out_total") == 2)
        #expect(try elsewhere.expectMeter("screenrelay_connections").lastValue == 1)
        #expect(elsewhere.counterTotal(label: "screenrelay_refused_total", dimensions: [("limit", "signal_rate")]) == 1)
        #expect(try elsewhere.expectMeter("screenrelay_subscribers", [("layer", "1")]).lastValue == 2)
        #expect(metrics.value(.framesOut) == 2, "and /metrics still shows them")
    }

    /// A relay with one publisher and one viewer that got its 6 frames: `/metrics` says so.
    @Test func aRelayShowsWhatItCarried() async throws {
        let relay = try await RunningRelay()
        let session = try await relay.createSession()
        let viewerToken = try await relay.token(session: session.sessionId, role: .subscriber)
        let frames = try TestMedia.encodedFrames(count: 6)
        let viewer = Task {
            try await RelayClient.connect(url: relay.webSocketURL, token: viewerToken, logger: quietLogger) { link, events in
                var received = 0
                while let event = try await events.next() {
                    switch event {
                    case .control(.welcome(_, _, _, let streams, _, _)):
                        if let stream = streams.first { try await link.send(.subscribe(streamId: stream.streamId)) }
                    case .control(.streamCreated(let stream)):
                        try await link.send(.subscribe(streamId: stream.streamId))
                    case .media:
                        received += 1
                        // Both still connected: what the relay shows once it has written them all.
                        if received == frames.count {
                            var shown = Exposition("")
                            _ = try await eventually(10) {
                                shown = Exposition((try? await relay.get("/metrics").1) ?? "")
                                return shown.values["screenrelay_frames_out_total"] == 6 && shown.series("screenrelay_subscribers", "layer").values.reduce(0, +) == 1
                            }
                            return shown
                        }
                    default: continue
                    }
                }
                throw TestFailure("the viewer got \(received) frames")
            }
        }
        try await relay.waitForConnections(1)
        try await RelayClient.connect(url: relay.webSocketURL, token: session.token, logger: quietLogger) { link, events in
            _ = try await events.nextControl()
            let stream = try await link.publishTestStream(events)
            _ = try await events.nextControl(where: { $0 == .requestKeyframe(streamId: stream.streamId) })
            try await link.send(frames, streamId: stream.streamId)
            _ = try await viewer.value
        }

        let shown = try await viewer.value
        #expect(shown.values["screenrelay_sessions"] == 1 && shown.values["screenrelay_connections"] == 2 && shown.values["screenrelay_streams"] == 1)
        #expect(shown.values["screenrelay_frames_in_total"] == 6 && shown.values["screenrelay_frames_out_total"] == 6)
        let bytesIn = shown.values["screenrelay_bytes_in_total"] ?? 0
        #expect(bytesIn > Double(frames.map(\.payload.count).reduce(0, +)) && shown.values["screenrelay_bytes_out_total"] == bytesIn)
        #expect(shown.series("screenrelay_subscribers", "layer").values.reduce(0, +) == 1, "\(shown.values)")
        #expect(shown.series("screenrelay_keyframe_requests_by_cause_total", "cause")["new_subscriber"] == 1)
        for name in RelayMetrics.Name.allCases {
            #expect(shown.help[name.exposed.name] == name.exposed.help && shown.type[name.exposed.name] == (name.isGauge ? "gauge" : "counter"))
        }
    }
}
