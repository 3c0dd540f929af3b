import Foundation
import HTTPTypes
import ParleyCore
import Testing
import NIOCore
import ParleyStore

@Suite struct OperationsTests {
    @Test func healthReadinessAndMetrics() async throws {
        try await TestServer.run { api in
            #expect(try await api.request(.get, "/healthz").status == .ok)
            #expect(try await api.request(.get, "/readyz").status == .ok)
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            _ = try await api.send("counted", from: alice, to: bob)
            let metrics = try await api.request(.get, "/metrics")
            let text = String(buffer: metrics.body)
            #expect(metrics.status == .ok)
            for name in ["parley_messages_sent_total", "parley_websocket_connections", "parley_send_duration_seconds_bucket", "hb_requests"] {
                #expect(text.contains(name), "\(name) missing from /metrics")
            }
        }
    }

    @Test func readinessFailsWhenTheDatabaseIsGone() async throws {
        try await TestServer.run { api in
            try await api.store.close()
            let response = try await api.request(.get, "/readyz")
            #expect(response.status == .serviceUnavailable)
        }
    }

    @Test func webClientIsServedWithSecurityHeaders() async throws {
        try await TestServer.run { api in
            let page = try await api.request(.get, "/")
            #expect(page.status == .ok && String(buffer: page.body).contains("<title>Parley</title>"))
            let csp = try #require(page.headers[HTTPField.Name("Content-Security-Policy")!])
            #expect(csp.contains("default-src 'none'") && csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"))
            #expect(page.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
            #expect(page.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
        }
    }

    @Test func unknownRoutesAndMethodsGetJSONErrorsWithoutInternals() async throws {
        try await TestServer.run { api in
            let missing = try await api.request(.get, "/v1/nothing-here")
            #expect(missing.status == .notFound && missing.errorCode == .notFound)
            let wrongMethod = try await api.request(.delete, "/v1/messages")
            #expect(wrongMethod.status.code >= 400 && wrongMethod.status.code < 500)
            let text = String(buffer: wrongMethod.body) + String(buffer: missing.body)
            #expect(!text.localizedCaseInsensitiveContains("sql") && !text.contains("Swift"))
        }
    }
}
