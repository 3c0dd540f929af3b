import ArgumentParser
import Foundation
import ParleySDK
import ParleyCore

/// `parley chat`: the terminal client, built on the client SDK and view models.
struct Chat: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Chat from the terminal (interactive), or script it (send, list, tail).",
        discussion: "Sign in once with `parley chat login` (or `register`); the session and a local copy of your chats live in --home.",
        subcommands: [Interactive.self, Register.self, Login.self, Logout.self, List.self, Send.self, Tail.self],
        defaultSubcommand: Interactive.self)

    struct Home: ParsableArguments {
        @Option(help: "Folder for the session and local database. [env: PARLEY_HOME] (default: ~/.parley)")
        var home: String?

        var storage: ClientStorage {
            let environment = ProcessInfo.processInfo.environment
            // $HOME first, as every Unix tool does (the passwd entry only when it is unset).
            let userHome = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? FileManager.default.homeDirectoryForCurrentUser.path
            let path = home ?? environment["PARLEY_HOME"] ?? URL(fileURLWithPath: userHome).appendingPathComponent(".parley").path
            return ClientStorage(directory: URL(fileURLWithPath: path))
        }

        func session() throws -> Session {
            guard let session = storage.restoreSession() else {
                throw ChatFailure("Not signed in. Run `parley chat login` or `parley chat register` first.")
            }
            return session
        }
    }

    struct Account: ParsableArguments {
        @Option(help: "Server URL. [env: PARLEY_SERVER] (default: http://127.0.0.1:8080)") var server: String?
        @Option(help: "Username.") var username: String
        @Option(help: "Password. [env: PARLEY_PASSWORD]") var password: String?

        func resolved() throws -> (URL, String) {
            let raw = server ?? ProcessInfo.processInfo.environment["PARLEY_SERVER"] ?? "http://127.0.0.1:8080"
            guard let url = URL(string: raw), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw ValidationError("--server must be an http(s) URL, not '\(raw)'.")
            }
            guard let password = password ?? ProcessInfo.processInfo.environment["PARLEY_PASSWORD"] else {
                throw ValidationError("Give --password or set PARLEY_PASSWORD.")
            }
            return (url, password)
        }
    }

    struct Register: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an account and sign in.")
        @OptionGroup var home: Home
        @OptionGroup var account: Account
        @Option(help: "Display name (default: the username).") var displayName: String?

        func run() async throws {
            let (url, password) = try account.resolved()
            let response = try await Failures.readable {
                try await HTTPParleyAPI(baseURL: url).register(username: account.username, displayName: displayName ?? account.username, password: password)
            }
            try home.storage.save(Session(serverURL: url, user: response.user, token: response.token))
            say("Registered and signed in as \(response.user.displayName) (@\(response.user.username)).")
        }
    }

    struct Login: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Sign in.")
        @OptionGroup var home: Home
        @OptionGroup var account: Account

        func run() async throws {
            let (url, password) = try account.resolved()
            let response = try await Failures.readable { try await HTTPParleyAPI(baseURL: url).login(username: account.username, password: password) }
            try home.storage.save(Session(serverURL: url, user: response.user, token: response.token))
            say("Signed in as \(response.user.displayName) (@\(response.user.username)).")
        }
    }

    struct Logout: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Sign out (revokes the session).")
        @OptionGroup var home: Home

        func run() async throws {
            let session = try home.session()
            try? await HTTPParleyAPI(baseURL: session.serverURL).logout(token: session.token)
            home.storage.forgetSession()
            say("Signed out.")
        }
    }

    struct Interactive: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "open", abstract: "The interactive client (the default).")
        @OptionGroup var home: Home
        @Option(help: "How long the start waits to catch up with the server before it lists the chats as last synced (default: 5s).")
        var catchUpWait = "5s"

        func run() async throws {
            let wait = try DurationSetting.parse("--catch-up-wait", catchUpWait)
            guard wait <= .seconds(600) else { throw ValidationError("--catch-up-wait '\(catchUpWait)' must be at most 10m.") }
            let session = try home.session()
            try await TerminalChat(session: session, storage: home.storage, catchUpWait: wait).run()
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print your conversations with unread counts.")
        @OptionGroup var home: Home

        func run() async throws {
            let session = try home.session()
            try await ScriptedChat(session: session, storage: home.storage).list()
        }
    }

    struct Send: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send one message and wait until the server has it.")
        @OptionGroup var home: Home
        @Option(help: "Username of the recipient.") var to: String
        @Argument(help: "The message.") var text: [String]

        func validate() throws {
            // Bytes that are not UTF-8 would reach the server as U+FFFD, another text than the one given.
            for index in 0..<Int(CommandLine.argc) where CommandLine.unsafeArgv[index].map({ String(validatingCString: $0) == nil }) ?? false {
                throw ValidationError("The command line holds bytes that are not UTF-8 text; nothing was sent.")
            }
        }

        func run() async throws {
            let session = try home.session()
            try await ScriptedChat(session: session, storage: home.storage).send(text.joined(separator: " "), to: to)
        }
    }

    struct Tail: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a conversation's latest messages, then new ones as they come.")
        @OptionGroup var home: Home
        @Option(help: "Username of the other person.") var with: String
        @Option(help: "How many recent messages to print first.") var count = 20
        @Option(help: "Exit after this many new messages; 0 prints the recent ones and exits (default: run until interrupted).")
        var exitAfter: Int?

        func validate() throws {
            guard (0...10_000).contains(count) else { throw ValidationError("--count must be 0–10000.") }
            if let exitAfter, exitAfter < 0 { throw ValidationError("--exit-after must be 0 or more.") }
        }

        func run() async throws {
            let session = try home.session()
            try await ScriptedChat(session: session, storage: home.storage).tail(with: with, count: count, exitAfter: exitAfter)
        }
    }
}

/// Turns client errors into plain messages for the terminal.
enum Failures {
    static func readable<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as ParleyClientError {
            throw ChatFailure(error.message)
        }
    }
}

/// The client of a signed-in account. A local copy that cannot be read (a damaged disk, a file
/// written over) is moved aside, said once on standard error, and the chats read again from the
/// server: the client starts instead of failing on every start.
@MainActor
enum AccountClient {
    static func open(_ session: Session, _ storage: ClientStorage) throws -> ParleyClient {
        try HomeLock.take(storage)
        let heartbeat = try HeartbeatSetting.fromEnvironment()
        do {
            let client = try ParleyClient(session: session, storage: storage, heartbeat: heartbeat)
            warnIfReadOnly(storage)
            return client
        } catch let damaged as DamagedLocalStore {
            let aside = try storage.setAsideStore(for: session.user.id)
            let note = "\(damaged) It was moved to \(aside.path) (messages not sent yet stay in it); your chats are read again from the server.\n"
            FileHandle.standardError.write(Data(note.utf8))
            return try ParleyClient(session: session, storage: storage, heartbeat: heartbeat)
        }
    }
}

extension AccountClient {
    /// Whether the local copy can be written: SQLite opens a file it cannot write read-only, and
    /// what is written offline then lives in memory only.
    static func isReadOnly(_ storage: ClientStorage) -> Bool {
        let directory = storage.directory.path
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory))?.filter { $0.hasPrefix("account-") } ?? []
        return access(directory, W_OK) != 0 || files.contains { access(directory + "/" + $0, W_OK) != 0 }
    }

    /// Says once, on standard error, that messages written offline would not be kept.
    static func warnIfReadOnly(_ storage: ClientStorage) {
        guard isReadOnly(storage) else { return }
        let note =
            "Your local copy in \(storage.directory.path) cannot be written: "
            + "what you write while offline is not kept, and is lost if you quit before it is sent.\n"
        FileHandle.standardError.write(Data(note.utf8))
    }
}

/// `PARLEY_HEARTBEAT=IDLE:TIMEOUT` (seconds, e.g. `20:10`, the default) sets how soon the terminal
/// client pings a quiet connection and how long it waits for an answer before calling it dead.
enum HeartbeatSetting {
    static func fromEnvironment() throws -> Heartbeat {
        guard let raw = ProcessInfo.processInfo.environment["PARLEY_HEARTBEAT"] else { return .standard }
        let parts = raw.split(separator: ":").compactMap { Double($0) }
        guard parts.count == 2, parts.allSatisfy({ $0 >= 0.1 && $0 <= 3600 }) else {
            throw ValidationError("PARLEY_HEARTBEAT must be IDLE:TIMEOUT in seconds (0.1–3600), like 20:10, not '\(raw)'.")
        }
        return Heartbeat(idleInterval: .milliseconds(Int64(parts[0] * 1000)), timeout: .milliseconds(Int64(parts[1] * 1000)))
    }
}
