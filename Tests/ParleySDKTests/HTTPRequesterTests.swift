import Foundation
import ParleySDK
import Testing

/// The SDK's REST calls behave the same through URLSession (Apple platforms' default, and usable on
/// Linux through FoundationNetworking) and AsyncHTTPClient (Linux's default): same answers, same
/// typed errors, against a real server.
@MainActor
@Suite struct HTTPRequesterTests {
    static let requesters: [(String, any HTTPRequester)] = [("URLSession", URLSessionRequester()), ("AsyncHTTPClient", AsyncHTTPClientRequester())]

    @Test(arguments: [0, 1])
    func everyCallAnswersAlikeThroughEitherRequester(index: Int) async throws {
        let (name, requester) = Self.requesters[index]
        let server = try ServerHarness()
        try await server.start()
        let api = HTTPParleyAPI(baseURL: server.url, requester: requester)
        let ada = try await api.register(username: "ada_\(index)", displayName: "Ada Lovelace", password: "password123")
        let grace = try await api.register(username: "grace_\(index)", displayName: "Grace Hopper", password: "password123")
        #expect(ada.user.displayName == "Ada Lovelace", "\(name)")

        let wrong = await #expect(throws: ParleyClientError.self) {
            _ = try await api.login(username: "ada_\(index)", password: "not-the-password")
        }
        #expect(wrong?.code == .invalidCredentials && wrong?.status == 401, "\(name)")
        let session = try await api.login(username: "ada_\(index)", password: "password123")

        #expect(try await api.searchUsers("gra", token: session.token).map(\.id) == [grace.user.id], "\(name)")
        #expect(try await api.user(grace.user.id, token: session.token).username == "grace_\(index)", "\(name)")
        #expect(try await api.conversations(token: session.token).isEmpty, "\(name)")
        let missing = await #expect(throws: ParleyClientError.self) {
            _ = try await api.history(.direct(ada.user.id, grace.user.id), before: nil, limit: 50, token: session.token)
        }
        #expect(missing?.status == 404, "\(name)")
        #expect(try await api.setDisplayName("Ada King", token: session.token).displayName == "Ada King", "\(name)")
        let refused = await #expect(throws: ParleyClientError.self) { _ = try await api.setDisplayName("You", token: session.token) }
        #expect(refused?.code == .invalidDisplayName && refused?.status == 400, "\(name)")

        try await api.logout(token: session.token)
        let revoked = await #expect(throws: ParleyClientError.self) { _ = try await api.conversations(token: session.token) }
        #expect(revoked?.isUnauthorized == true, "\(name)")
        await server.stop()

        // Nobody listening: a transport failure, not a crash or a hang.
        let down = await #expect(throws: ParleyClientError.self) { _ = try await api.conversations(token: ada.token) }
        #expect(down?.status == 0 && down?.code == nil, "\(name)")
    }
}
