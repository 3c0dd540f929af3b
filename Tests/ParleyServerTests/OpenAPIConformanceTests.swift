import Foundation
import Hummingbird
import Logging
import ParleyCore
@testable import ParleyServer
import ParleySQLite
import Testing

/// openapi.yaml and the server agree. Every REST response in every test is also checked against the
/// spec (see ``TestAPI``); this suite checks the route set and the checker itself.
@Suite struct OpenAPIConformanceTests {
    @Test func theSpecDocumentsExactlyTheServersRoutes() async throws {
        let store = try SQLiteStore(path: TestServer.temporaryDatabase())
        let server = ServerContext(configuration: TestServer.configuration(), store: store, bus: nil, logger: nil)
        func operation(_ route: Router<ParleyRequestContext>.RouteDescription) -> String {
            let path = route.path.description.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
            return "\(route.method.rawValue) /\(path.joined(separator: "/"))"
        }
        // The HTTP router answers plain requests on every path, /v1/ws included (426); the
        // WebSocket endpoint answers the upgrades of GET /v1/ws.
        let files = try await FileStorageSetup.make(server.configuration.files, store: store, clustered: false, logger: server.logger)
        let routes = makeRouter(server, vapid: VAPIDKey(), files: files).routes.map(operation)
        #expect(Set(routes) == OpenAPISpec.shared.operations)
        #expect(routes.count == Set(routes).count)
    }

    @Test func theCheckerCatchesUndocumentedStatusesAndWrongShapes() {
        let spec = OpenAPISpec.shared
        let user = #"{"id":"\#(UserID.random())","username":"alice","displayName":"Alice","createdAt":1}"#
        #expect(spec.problems(method: .get, uri: "/v1/me", status: 200, body: Data(user.utf8)).isEmpty)
        #expect(!spec.problems(method: .get, uri: "/v1/me", status: 418, body: Data()).isEmpty)
        #expect(!spec.problems(method: .get, uri: "/v1/me", status: 200, body: Data(#"{"id":"x","username":"alice"}"#.utf8)).isEmpty)
        #expect(!spec.problems(method: .get, uri: "/v1/me", status: 200, body: Data(user.replacingOccurrences(of: "}", with: #","extra":1}"#).utf8)).isEmpty)
        #expect(!spec.problems(method: .get, uri: "/v1/me", status: 401, body: Data(#"{"error":{"code":"made_up","message":"x"}}"#.utf8)).isEmpty)
    }
}
