import Crypto
import Foundation
import Hummingbird
import NIOCore
import ParleyCore
import ParleyStore
import Logging
import Prometheus

/// Health, readiness and metrics, for orchestrators and Prometheus. Health and readiness are open;
/// metrics need the metrics token when one is set, and otherwise answer loopback clients only.
struct OperationsRoutes {
    let store: any ParleyStore
    let health: StorageHealth
    let metricsToken: String?

    /// The one route ``TokenAuthenticator`` leaves alone: its bearer token is the metrics token.
    static let metricsPath = "/metrics"

    func add(to router: Router<ParleyRequestContext>) {
        router.get("/healthz") { _, _ in try JSONBody.response(["status": "ok"]) }
        // Not ready while writes fail; then it checks for itself, so it recovers with no traffic.
        router.get("/readyz") { _, context in
            do {
                if health.isFailing {
                    try await store.checkWritable()
                    health.writeSucceeded()
                } else {
                    try await store.ping()
                }
                return try JSONBody.response(["status": "ready"])
            } catch StoreError.storageUnavailable {
                return try JSONBody.response(["status": "unavailable"], status: .serviceUnavailable)
            } catch {
                context.logger.warning("Readiness check failed", metadata: ["error": "\(error)"])
                return try JSONBody.response(["status": "unavailable"], status: .serviceUnavailable)
            }
        }
        router.get(RouterPath(Self.metricsPath)) { request, context in
            try authorizeMetrics(request, context)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: ServerMetrics.registry.emitToBuffer())))
        }
    }

    private func authorizeMetrics(_ request: Request, _ context: ParleyRequestContext) throws {
        guard let metricsToken else {
            guard
                IPNetwork.loopback.contains(where: { network in
                    IPNetwork.addressBytes(context.clientKey).map(network.contains) ?? false
                })
            else {
                throw ParleyError(.unauthorized, "Metrics are served to loopback clients only; set a metrics token to scrape remotely.")
            }
            return
        }
        let given = request.headers[.authorization].flatMap(SessionTokens.bearerCredentials) ?? ""
        // Compare digests, so the time taken says nothing about how much of the token was right.
        guard SHA256.hash(data: Data(given.utf8)) == SHA256.hash(data: Data(metricsToken.utf8)) else {
            throw ParleyError(.unauthorized, "Metrics need 'Authorization: Bearer <metrics token>'.")
        }
    }
}

extension IPNetwork {
    static let loopback = ["127.0.0.0/8", "::1/128"].compactMap(IPNetwork.init)
}
