import Foundation
import Hummingbird
import NIOPosix
import ParleyCore
import ParleyStore

/// Register, log in, log out (this session or all), change password, me (and my display name),
/// user search.
struct AccountRoutes {
    let store: any ParleyStore
    let configuration: ServerConfiguration
    let hub: ConnectionHub
    let registerLimiter: RateLimiter
    let loginThrottle: LoginThrottle
    let searchLimiter: RateLimiter
    let nameChangeLimiter: RateLimiter
    let announcer: ProfileAnnouncer
    /// Compared against when the username is unknown, so a login takes as long either way.
    private let decoyHash: String

    init(_ server: ServerContext) {
        self.store = server.store
        self.configuration = server.configuration
        self.hub = server.hub
        self.registerLimiter = server.registerLimiter
        self.loginThrottle = server.loginThrottle
        self.searchLimiter = server.searchLimiter
        self.nameChangeLimiter = server.nameChangeLimiter
        self.announcer = ProfileAnnouncer(store: server.store, hub: server.hub, logger: server.logger)
        self.decoyHash = PasswordHashing.hash(UUID().uuidString, cost: server.configuration.bcryptCost)
    }

    func add(to router: Router<ParleyRequestContext>) {
        router.post("/v1/auth/register") { request, context in try await register(request, context) }
        router.post("/v1/auth/login") { request, context in try await login(request, context) }
        router.post("/v1/auth/logout") { _, context in
            let me = try context.requireUser()
            if let hash = context.tokenHash {
                try await store.deleteSession(tokenHash: hash)
                hub.endSessions(of: me) { $0 == hash }
            }
            return Response(status: .noContent)
        }
        router.post("/v1/auth/logout-all") { _, context in
            let me = try context.requireUser()
            try await store.deleteSessions(of: me, keeping: nil)
            hub.endSessions(of: me) { _ in true }
            return Response(status: .noContent)
        }
        router.post("/v1/auth/password") { request, context in try await changePassword(request, context) }
        router.get("/v1/me") { _, context in
            guard let user = try await store.user(try context.requireUser()) else { throw StoreError.userNotFound }
            return try JSONBody.response(user)
        }
        router.patch("/v1/me") { request, context in try await changeDisplayName(request, context) }
        router.get("/v1/users") { request, context in
            let me = try context.requireUser()
            let query = QueryReader(request: request)
            let prefix = try Validation.searchQuery(query.text("query") ?? "").get()
            let limit = try query.int("limit", default: 20, range: 1...20)
            if let wait = searchLimiter.acquire(me.rawValue) {
                throw ParleyError(.rateLimited, "Too many searches; try again in \(wait) s.", retryAfter: wait)
            }
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
        if let wait = registerLimiter.acquire(context.clientKey) { throw Self.tooMany(wait) }
        let body = try await JSONBody.decode(API.RegisterRequest.self, from: request, context: context)
        let username = try Validation.username(body.username).get()
        let displayName = try Validation.displayName(body.displayName).get()
        let password = try Validation.password(body.password).get()
        let user = try await store.createUser(
            NewUser(username: username, displayName: displayName, passwordHash: try await hash(password)), now: .now())
        loginThrottle.succeeded(username: username, address: context.clientKey)
        return try JSONBody.response(try await startSession(for: user), status: .created)
    }

    /// Usernames and passwords are validated before anything else sees them, so the throttle, the
    /// database and bcrypt all see the same string (no NUL, no control characters).
    private func login(_ request: Request, _ context: ParleyRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(API.LoginRequest.self, from: request, context: context)
        let username = try Validation.username(body.username).get()
        let password = try Validation.password(body.password).get()
        let address = context.clientKey
        if let wait = loginThrottle.check(username: username, address: address) { throw Self.tooMany(wait) }
        let credentials = try await store.credentials(username: username)
        guard let credentials, try await verify(password, credentials.passwordHash) else {
            if credentials == nil { _ = try await verify(password, decoyHash) }
            loginThrottle.failed(username: username, address: address)
            throw ParleyError(.invalidCredentials, "Wrong username or password.")
        }
        loginThrottle.succeeded(username: username, address: address)
        return try JSONBody.response(try await startSession(for: credentials.user))
    }

    /// Needs the current password (throttled like a login); ends every other session of the user,
    /// on every connection, and keeps this one.
    private func changePassword(_ request: Request, _ context: ParleyRequestContext) async throws -> Response {
        let me = try context.requireUser()
        let body = try await JSONBody.decode(API.ChangePasswordRequest.self, from: request, context: context)
        let newPassword = try Validation.password(body.newPassword).get()
        guard let user = try await store.user(me), let credentials = try await store.credentials(username: user.username) else {
            throw StoreError.userNotFound
        }
        let address = context.clientKey
        if let wait = loginThrottle.check(username: user.username, address: address) { throw Self.tooMany(wait) }
        guard case .success(let current) = Validation.password(body.currentPassword),
            try await verify(current, credentials.passwordHash)
        else {
            loginThrottle.failed(username: user.username, address: address)
            throw ParleyError(.invalidCredentials, "The current password is wrong.")
        }
        try await store.changePassword(of: me, to: try await hash(newPassword), keeping: context.tokenHash)
        let kept = context.tokenHash
        hub.endSessions(of: me) { $0 != kept }
        return Response(status: .noContent)
    }

    /// A display name follows registration's rules; a change is limited per user and told to
    /// everyone who sees the user (``ProfileAnnouncer``); the same name again changes nothing.
    private func changeDisplayName(_ request: Request, _ context: ParleyRequestContext) async throws -> Response {
        let me = try context.requireUser()
        let body = try await JSONBody.decode(API.ProfileRequest.self, from: request, context: context)
        let displayName = try Validation.displayName(body.displayName).get()
        guard let current = try await store.user(me) else { throw StoreError.userNotFound }
        guard current.displayName != displayName else { return try JSONBody.response(current) }
        if let wait = nameChangeLimiter.acquire(me.rawValue) {
            throw ParleyError(.rateLimited, "Too many name changes; try again in \(wait) s.", retryAfter: wait)
        }
        let user = try await store.setDisplayName(of: me, to: displayName)
        await announcer.announce(user)
        return try JSONBody.response(user)
    }

    private func startSession(for user: User) async throws -> API.SessionResponse {
        let token = SessionTokens.generate()
        let now = Timestamp.now()
        let expiresAt = now.adding(seconds: configuration.sessionLifetimeSeconds)
        try await store.createSession(tokenHash: SessionTokens.hash(token), user: user.id, expiresAt: expiresAt, now: now)
        return API.SessionResponse(user: user, token: token, expiresAt: expiresAt)
    }

    private func hash(_ password: String) async throws -> String {
        let cost = configuration.bcryptCost
        return try await NIOThreadPool.singleton.runIfActive { PasswordHashing.hash(password, cost: cost) }
    }

    private func verify(_ password: String, _ hash: String) async throws -> Bool {
        try await NIOThreadPool.singleton.runIfActive { PasswordHashing.verify(password, against: hash) }
    }

    private static func tooMany(_ wait: Int) -> ParleyError {
        ParleyError(.rateLimited, "Too many attempts; try again in \(wait) s.", retryAfter: wait)
    }
}
