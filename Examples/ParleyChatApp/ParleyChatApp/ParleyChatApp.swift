import ParleySDK
import SwiftUI

/// The app: restores the saved session or shows the sign-in form, then the conversation list.
@main
struct ParleyChatApp: App {
    @State private var client: ParleyClient?
    private let storage = ClientStorage(directory: URL.applicationSupportDirectory.appending(path: "Parley"))

    var body: some Scene {
        WindowGroup {
            Group {
                if let client {
                    ConversationListView(client: client) {
                        Task {
                            await client.signOut(storage: storage)
                            self.client = nil
                        }
                    }
                } else {
                    SignInView(storage: storage) { client = $0 }
                }
            }
            .task { if client == nil { client = try? ParleyClient.restore(from: storage) } }
        }
    }
}

/// Sign in, or create an account, on a server.
struct SignInView: View {
    let storage: ClientStorage
    let signedIn: (ParleyClient) -> Void
    @State private var server = "http://localhost:8080"
    @State private var username = ""
    @State private var password = ""
    @State private var error: String?
    @State private var busy = false

    var body: some View {
        Form {
            TextField("Server", text: $server).textContentType(.URL)
            TextField("Username", text: $username).textContentType(.username)
            SecureField("Password", text: $password).textContentType(.password)
            if let error { Text(error).foregroundStyle(.red) }
            Button("Sign in") { go(register: false) }.disabled(busy)
            Button("Create account") { go(register: true) }.disabled(busy)
        }
    }

    private func go(register: Bool) {
        guard let url = URL(string: server) else { return error = "That server address is not a URL." }
        busy = true
        Task {
            defer { busy = false }
            do {
                let client = register
                    ? try await ParleyClient.register(to: url, username: username, displayName: username, password: password, storage: storage)
                    : try await ParleyClient.signIn(to: url, username: username, password: password, storage: storage)
                client.start()
                signedIn(client)
            } catch {
                self.error = "\(error)"
            }
        }
    }
}
