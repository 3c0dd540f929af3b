import ParleySDK
import ParleyViewModels
import SwiftUI

/// The conversation list: everything it shows comes from ``ConversationListViewModel``.
struct ConversationListView: View {
    @State private var model: ConversationListViewModel
    @State private var filter = ""
    let signOut: () -> Void

    init(client: ParleyClient, signOut: @escaping () -> Void) {
        _model = State(initialValue: ConversationListViewModel(client: client))
        self.signOut = signOut
    }

    var body: some View {
        NavigationStack {
            content
                .navigationTitle("Chats")
                .searchable(text: $filter, prompt: "Filter conversations")
                .toolbar {
                    ToolbarItem { NavigationLink("New chat") { NewChatView(model: model) } }
                    ToolbarItem { Menu("More") { Button("Log out", role: .destructive, action: signOut) } }
                }
        }
    }

    @ViewBuilder private var content: some View {
        switch model.state {
        case .loading:
            ProgressView()
        case .empty:
            ContentUnavailableView {
                Text(ConversationListViewModel.emptyText)
            } actions: {
                NavigationLink("Start a chat") { NewChatView(model: model) }
            }
        case .error(let message):
            ContentUnavailableView {
                Text(message)
            } actions: {
                Button("Try again") { Task { await model.retry() } }
            }
        case .loaded:
            List(model.rows.filter { filter.isEmpty || $0.title.localizedCaseInsensitiveContains(filter) }) { row in
                NavigationLink { ChatView(model: model.chat(for: row)) } label: { ConversationRowView(row: row) }
            }
        }
    }
}

/// One row: avatar with online dot, name, preview, time and unread badge.
struct ConversationRowView: View {
    let row: ConversationListViewModel.Row

    var body: some View {
        HStack(spacing: 12) {
            Text(row.initials)
                .font(.headline).foregroundStyle(.white)
                .frame(width: 44, height: 44).background(Circle().fill(.teal))
                .overlay(alignment: .bottomTrailing) {
                    if row.isOnline { Circle().fill(.green).frame(width: 12, height: 12) }
                }
            VStack(alignment: .leading, spacing: 2) {
                HStack {
                    Text(row.title).font(.headline).lineLimit(1)
                    Spacer()
                    Text(row.timestamp).font(.caption).foregroundStyle(.secondary)
                }
                HStack {
                    Text(row.preview).font(.subheadline).foregroundStyle(.secondary).lineLimit(1)
                    Spacer()
                    if row.unreadCount > 0 {
                        Text("\(row.unreadCount)").font(.caption2.bold()).foregroundStyle(.white)
                            .padding(.horizontal, 6).padding(.vertical, 2).background(Capsule().fill(.blue))
                    }
                }
            }
        }
    }
}

/// Search for someone to start a chat with (at least 3 characters).
struct NewChatView: View {
    @Bindable var model: ConversationListViewModel

    var body: some View {
        List {
            if let error = model.searchError { Text(error).foregroundStyle(.red) }
            ForEach(model.searchResults, id: \.id) { user in
                NavigationLink(user.displayName) { ChatView(model: model.startChat(with: user)) }
            }
        }
        .searchable(text: $model.searchQuery, prompt: "Name or username")
        .task(id: model.searchQuery) { await model.search() }
        .navigationTitle("New chat")
    }
}

#Preview("Row") {
    ConversationRowView(row: .init(
        id: .direct(UserID(rawValue: "a"), UserID(rawValue: "b")), title: "Grace Hopper", initials: "GH",
        preview: "You: Ship it!", timestamp: "9:41 AM", unreadCount: 2, isOnline: true))
}
