import Hummingbird
import NIOCore
import ParleyStore

/// Health, readiness and metrics: unauthenticated, for orchestrators and Prometheus.
struct OperationsRoutes {
    let store: any ParleyStore

    func add(to router: Router<ParleyRequestContext>) {
        router.get("/healthz") { _, _ in try JSONBody.response(["status": "ok"]) }
        router.get("/readyz") { _, context in
            do {
                try await store.ping()
                return try JSONBody.response(["status": "ready"])
            } catch {
                context.logger.warning("Readiness check failed", metadata: ["error": "\(error)"])
                return try JSONBody.response(["status": "unavailable"], status: .serviceUnavailable)
            }
        }
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: ServerMetrics.registry.emitToBuffer())))
        }
    }
}
