import CoreMetrics
import Prometheus

/// swift-metrics' factory over one relay's Prometheus registry, registering each of the relay's metrics with the
/// HELP text `/metrics` shows for it.
///
/// `PrometheusMetricsFactory` registers every metric with an empty HELP text, and the registry stops the process
/// (a fatal error) when one name is registered with two different texts: HELP cannot be added beside it. So the
/// relay's counters and gauges are registered here, by name, with their text; whatever else asks this factory
/// (histograms, timers, a name it does not know) goes to a `PrometheusMetricsFactory` of the same registry, which
/// also unregisters every metric destroyed (both make the registry's own `Counter` and `Gauge`).
struct RelayMetricsFactory: MetricsFactory {
    let registry: PrometheusCollectorRegistry
    /// HELP texts by metric name.
    let help: [String: String]
    private let prometheus: PrometheusMetricsFactory

    init(registry: PrometheusCollectorRegistry, help: [String: String]) {
        self.registry = registry
        self.help = help
        prometheus = PrometheusMetricsFactory(registry: registry)
    }

    private func descriptor(_ label: String) -> MetricNameDescriptor? {
        help[label].map { MetricNameDescriptor(metricName: label, unitName: "", helpText: $0) }
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        guard let descriptor = descriptor(label) else { return prometheus.makeCounter(label: label, dimensions: dimensions) }
        return registry.makeCounter(descriptor: descriptor, labels: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        guard let descriptor = descriptor(label) else { return prometheus.makeFloatingPointCounter(label: label, dimensions: dimensions) }
        return registry.makeCounter(descriptor: descriptor, labels: dimensions)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        guard let descriptor = descriptor(label) else { return prometheus.makeMeter(label: label, dimensions: dimensions) }
        return registry.makeGauge(descriptor: descriptor, labels: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        prometheus.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        prometheus.makeTimer(label: label, dimensions: dimensions)
    }

    func destroyCounter(_ handler: any CounterHandler) { prometheus.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { prometheus.destroyFloatingPointCounter(handler) }
    func destroyMeter(_ handler: any MeterHandler) { prometheus.destroyMeter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { prometheus.destroyRecorder(handler) }
    func destroyTimer(_ handler: any TimerHandler) { prometheus.destroyTimer(handler) }
}
