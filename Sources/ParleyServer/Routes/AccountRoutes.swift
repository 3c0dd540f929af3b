import Foundation
import HummingbirdBcrypt
import Hummingbird
import NIOPosix
import ParleyCore
import ParleyStore

/// Register, log in, log out, me, user search.
struct AccountRoutes {
    let store: any ParleyStore
    let configuration: ServerConfiguration
    let loginLimiter: RateLimiter
    /// Compared against when the username is unknown, so a login takes as long either way.
    private let decoyHash: String

    init(store: any ParleyStore, configuration: ServerConfiguration, loginLimiter: RateLimiter) {
        self.store = store
        self.configuration = configuration
        self.loginLimiter = loginLimiter
        self.decoyHash = Bcrypt.hash(UUID().uuidString, cost: configuration.bcryptCost)
    }

    func add(to router: Router<ParleyRequestContext>) {
        router.post("/v1/auth/register") { request, context in try await register(request, context) }
        router.post("/v1/auth/login") { request, context in try await login(request, context) }
        router.post("/v1/auth/logout") { _, context in
            _ = try context.requireUser()
            if let hash = context.tokenHash { try await store.deleteSession(tokenHash: hash) }
            return Response(status: .noContent)
        }
        router.get("/v1/me") { _, context in
            guard let user = try await store.user(try context.requireUser()) else { throw StoreError.userNotFound }
            return try JSONBody.response(user)
        }
        router.get("/v1/users") { request, context in
            let me = try context.requireUser()
            let query = QueryReader(request: request)
            let prefix = (query.string("query") ?? "").trimmingCharacters(in: .whitespaces)
            guard (1...64).contains(prefix.count) else { throw ParleyError(.invalidQuery, "'query' must be 1–64 characters.") }
            let limit = try query.int("limit", default: 20, range: 1...50)
            return try JSONBody.response(API.UserList(users: try await store.searchUsers(prefix: prefix, excluding: me, limit: limit)))
        }
        router.get("/v1/users/:id") { _, context in
            _ = try context.requireUser()
            guard let id = context.parameters.get("id").flatMap(UserID.init(validating:)), let user = try await store.user(id)
            else { throw StoreError.userNotFound }
            return try JSONBody.response(user)
        }
    }

    private func register(_ request: Request, _ context: ParleyRequestContext) async throws -> Response {
        try throttle("register:\(context.clientKey)")
        let body = try await JSONBody.decode(API.RegisterRequest.self, from: request, context: context)
        let username = try Validation.username(body.username).get()
        let displayName = try Validation.displayName(body.displayName).get()
        let password = try Validation.password(body.password).get()
        let cost = configuration.bcryptCost
        let hash = try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
        let user = try await store.createUser(NewUser(username: username, displayName: displayName, passwordHash: hash), now: .now())
        return try JSONBody.response(try await startSession(for: user), status: .created)
    }

    private func login(_ request: Request, _ context: ParleyRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(API.LoginRequest.self, from: request, context: context)
        let username = body.username.lowercased()
        try throttle("login:ip:\(context.clientKey)")
        try throttle("login:user:\(username.prefix(64))")
        let credentials = try await store.credentials(username: username)
        let hash = credentials?.passwordHash ?? decoyHash
        let password = body.password
        let matches = try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: hash) }
        guard let credentials, matches else {
            throw ParleyError(.invalidCredentials, "Wrong username or password.")
        }
        return try JSONBody.response(try await startSession(for: credentials.user))
    }

    private func startSession(for user: User) async throws -> API.SessionResponse {
        let token = SessionTokens.generate()
        let now = Timestamp.now()
        let expiresAt = now.adding(seconds: configuration.sessionLifetimeSeconds)
        try await store.createSession(tokenHash: SessionTokens.hash(token), user: user.id, expiresAt: expiresAt, now: now)
        return API.SessionResponse(user: user, token: token, expiresAt: expiresAt)
    }

    private func throttle(_ key: String) throws {
        if let wait = loginLimiter.acquire(key) {
            throw ParleyError(.rateLimited, "Too many attempts; try again in \(wait) s.", retryAfter: wait)
        }
    }
}
