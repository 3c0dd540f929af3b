import Metrics
import Prometheus
import Synchronization

/// The server's Prometheus metrics. One registry per process (swift-metrics is bootstrapped once),
/// shared by every application the process builds.
public struct ServerMetrics: Sendable {
    /// The process registry, exposed at `/metrics`.
    public static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }()

    let connections: Meter
    let messagesSent: Metrics.Counter
    let duplicateSends: Metrics.Counter
    let sendDuration: Metrics.Timer
    let slowConsumersDisconnected: Metrics.Counter

    init() {
        _ = Self.registry
        connections = Meter(label: "parley_websocket_connections")
        messagesSent = Metrics.Counter(label: "parley_messages_sent_total")
        duplicateSends = Metrics.Counter(label: "parley_duplicate_sends_total")
        sendDuration = Metrics.Timer(label: "parley_send_duration_seconds")
        slowConsumersDisconnected = Metrics.Counter(label: "parley_slow_consumers_disconnected_total")
    }
}
