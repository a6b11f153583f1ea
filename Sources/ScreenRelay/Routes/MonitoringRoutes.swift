import Hummingbird
import NIOCore

/// What a load balancer and a scraper read: `/healthz`, and `/metrics` (Prometheus' text format) for whoever
/// shows the metrics token, or without one only for this machine.
struct MonitoringRoutes: RelayRoutes {
    let metrics: RelayMetrics
    /// `--metrics-token`; nil: only a local scraper that no proxy forwards may read the metrics.
    let metricsToken: String?

    func addRoutes(to router: Router<RelayRequestContext>) {
        router.get("/healthz") { _, _ in "ok\n" }
        router.get("/metrics") { request, context in
            // With a token, for whoever shows it; without one, only for this machine (a local scraper): the
            // metrics name sessions, and nothing that can reach the port from elsewhere may read them by default.
            if let metricsToken {
                guard RelaySecretCheck.constantTimeEqual(request.bearerToken ?? "", metricsToken) else {
                    metrics.refused(.metricsToken)
                    throw HTTPError(.unauthorized, message: "/metrics needs its token: Authorization: Bearer <metrics token>")
                }
            } else if !request.isLocalAndDirect(channel: context.channel) {
                metrics.refused(.metricsToken)
                throw HTTPError(.unauthorized, message: "/metrics is served to this machine only; give the relay --metrics-token to scrape it from elsewhere")
            }
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: .init(byteBuffer: ByteBuffer(string: metrics.exposition())))
        }
    }
}
