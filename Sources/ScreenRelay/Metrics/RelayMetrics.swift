public import CoreMetrics
import Prometheus
import Synchronization

/// What the relay counts, and the Prometheus text `/metrics` serves of it.
///
/// The relay counts through swift-metrics (`Counter`, `Meter`) into a Prometheus registry of its own, handing each
/// metric its factory: it never bootstraps swift-metrics' global `MetricsSystem`. A process may run many relays
/// (the tests run hundreds, one after another and side by side), and one registry for all would add their counts
/// together; a global bootstrap can also happen only once per process, and is the application's to make, not a
/// library's. A deployment that wants the same figures elsewhere gives ``init(alsoReportingTo:)`` its factory
/// (docs/operations.md, "Metrics elsewhere").
public final class RelayMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    private let factory: any MetricsFactory
    /// The series without labels, in ``Name`` order: a frame counted is an index and an atomic add.
    private let series: [Series]
    private let refusals: [RelayLimit: Series]
    /// The labelled series counted so far (``Family``), with their values, to know when a gauge is back to 0.
    private let labelled = Mutex<[LabelledKey: (series: Series, value: Int)]>([:])
    /// Gauges read from live state rather than counted as they change, refreshed before each exposition.
    private let samples = Mutex<[Name: @Sendable () -> Int]>([:])

    /// `other`: a factory that gets every figure too (an OpenTelemetry exporter's, say); `/metrics` is served from
    /// the relay's own registry either way.
    public init(alsoReportingTo other: (any MetricsFactory)? = nil) {
        var help = Dictionary(uniqueKeysWithValues: Name.allCases.map { ($0.exposed.name, $0.exposed.help) })
        for family in Family.allCases { help[family.rawValue] = family.help }
        help[Self.refusals.name] = Self.refusals.help
        let own = RelayMetricsFactory(registry: registry, help: help)
        let factory: any MetricsFactory = other.map { MultiplexMetricsHandler(factories: [own, $0]) } ?? own
        self.factory = factory
        series = Name.allCases.map { Series($0.exposed.name, gauge: $0.isGauge, factory: factory) }
        refusals = Dictionary(uniqueKeysWithValues: RelayLimit.allCases.map { limit in
            (limit, Series(Self.refusals.name, [(Self.refusals.label, limit.rawValue)], gauge: false, factory: factory))
        })
    }

    func add(_ name: Name, _ value: Int = 1) { series[name.rawValue].add(value) }

    func set(_ name: Name, _ value: Int) { series[name.rawValue].set(value) }

    /// Counts one thing a limit refused (`screenrelay_refused_total{limit="…"}`).
    func refused(_ limit: RelayLimit, _ count: Int = 1) { refusals[limit]?.add(count) }

    /// Adds to one series of a labelled family (`family{label="value"}`); a gauge back at 0 leaves the exposition.
    func add(_ family: Family, _ label: String, _ value: Int = 1) {
        guard value != 0 else { return }
        let key = LabelledKey(family: family, label: label)
        labelled.withLock { all in
            var entry = all[key] ?? (Series(family.rawValue, [(family.label, label)], gauge: family.isGauge, factory: factory), 0)
            entry.series.add(value)
            entry.value += value
            if family.isGauge && entry.value == 0 {
                entry.series.destroy()
                all[key] = nil
            } else {
                all[key] = entry
            }
        }
    }

    /// Sets the gauge `name` from `read` before each exposition and at ``refreshSamples()`` (a figure that changes
    /// with every frame, cheaper to read when asked than to report as it changes).
    func sample(_ name: Name, from read: @escaping @Sendable () -> Int) {
        samples.withLock { $0[name] = read }
    }

    /// Sets the sampled gauges from what they read now (for a factory besides `/metrics`, which reads them itself).
    func refreshSamples() {
        for (name, read) in samples.withLock({ $0 }) { set(name, read()) }
    }

    /// Adds what `counters` counted since `reported` (the same router's counters when last folded).
    func fold(_ counters: RouterCounters, since reported: RouterCounters) {
        guard counters != reported else { return }
        add(.framesDropped, counters.droppedFrames - reported.droppedFrames)
        add(.audioFramesDropped, counters.droppedAudioFrames - reported.droppedAudioFrames)
        add(.keyframeRequests, counters.keyframeRequestsSent - reported.keyframeRequestsSent)
        add(.framesThinned, counters.thinnedFrames - reported.thinnedFrames)
        add(.framesFittedIn, counters.fittedInFrames - reported.fittedInFrames)
        add(.subscribersEvicted, counters.evictedSubscribers - reported.evictedSubscribers)
        add(.renditionsStarted, counters.renditionsAsked - reported.renditionsAsked)
        add(.renditionsStopped, counters.renditionsStopped - reported.renditionsStopped)
        for (cause, count) in counters.keyframeRequestsByCause {
            add(.keyframeRequestsByCause, cause.rawValue, count - reported.keyframeRequestsByCause[cause, default: 0])
        }
        for (limit, count) in counters.refused where count != reported.refused[limit, default: 0] {
            refused(limit, count - reported.refused[limit, default: 0])
        }
    }

    /// The Prometheus text exposition (format 0.0.4) of the relay's registry.
    public func exposition() -> String {
        refreshSamples()
        return Self.wholeNumbers(registry.emitToString())
    }

    /// Every figure the relay counts is a whole number, but swift-prometheus writes a gauge as a double (`2.0`):
    /// written as whole numbers (`2`), as `/metrics` always showed them, for scrapers that read integers.
    private static func wholeNumbers(_ text: String) -> String {
        var lines: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            guard !line.hasPrefix("#"), line.hasSuffix(".0"), let space = line.lastIndex(of: " "),
                let value = Double(line[line.index(after: space)...]), let whole = Int(exactly: value)
            else {
                lines.append(line)
                continue
            }
            lines.append(line[...space] + String(whole))
        }
        return lines.joined(separator: "\n")
    }

    /// What `/metrics` shows now for a series; 0 when it shows none. (Read from the exposition: the registry keeps
    /// its values to render them, and has no other reading. For tests and tools, not for every frame.)
    public func value(_ name: Name) -> Int { shown(name.exposed.name) }

    public func value(_ limit: RelayLimit) -> Int { shown(Self.refusals.name, Self.refusals.label, limit.rawValue) }

    public func value(_ family: Family, _ label: String) -> Int { shown(family.rawValue, family.label, label) }

    private func shown(_ name: String, _ label: String? = nil, _ value: String = "") -> Int {
        let series = label.map { "\(name){\($0)=\"\(Self.escapedLabelValue(value))\"}" } ?? name
        for line in exposition().split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), line[..<space] == series else { continue }
            return Double(line[line.index(after: space)...]).flatMap { Int(exactly: $0.rounded()) } ?? 0
        }
        return 0
    }

    /// A label value as the exposition writes it.
    private static func escapedLabelValue(_ value: String) -> String {
        var escaped = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    private struct LabelledKey: Hashable {
        let family: Family
        let label: String
    }
}

/// One series, as swift-metrics reaches it: a counter (only goes up) or a gauge (a `Meter`: up, down, set).
private enum Series: Sendable {
    case counter(CoreMetrics.Counter)
    case gauge(Meter)

    init(_ name: String, _ labels: [(String, String)] = [], gauge: Bool, factory: any MetricsFactory) {
        self = gauge ? .gauge(Meter(label: name, dimensions: labels, factory: factory)) : .counter(CoreMetrics.Counter(label: name, dimensions: labels, factory: factory))
    }

    func add(_ value: Int) {
        switch self {
        case .counter(let counter):
            // What is counted only grows: a difference of a router's counters is never negative, and 0 is nothing.
            if value > 0 { counter.increment(by: value) }
        case .gauge(let meter):
            if value >= 0 { meter.increment(by: Double(value)) } else { meter.decrement(by: Double(-value)) }
        }
    }

    func set(_ value: Int) {
        if case .gauge(let meter) = self { meter.set(value) }
    }

    func destroy() {
        switch self {
        case .counter(let counter): counter.destroy()
        case .gauge(let meter): meter.destroy()
        }
    }
}
