import ParleySDK
import ParleyViewModels
import SwiftUI

/// One chat: everything it shows comes from ``ChatViewModel``.
struct ChatView: View {
    @Bindable var model: ChatViewModel

    var body: some View {
        VStack(spacing: 0) {
            if model.isOffline {
                Text("Offline: messages will be sent when the connection is back.")
                    .font(.footnote).frame(maxWidth: .infinity).padding(6).background(.yellow.opacity(0.3))
            }
            messages
            composer
        }
        .navigationTitle(model.title)
        .toolbar {
            ToolbarItem(placement: .principal) {
                VStack {
                    Text(model.title).font(.headline)
                    Text(model.otherUserTyping ? "typing…" : model.presenceText).font(.caption).foregroundStyle(.secondary)
                }
            }
        }
        .task { await model.load() }
    }

    private var messages: some View {
        ScrollViewReader { proxy in
            List {
                if model.hasOlder {
                    ProgressView().frame(maxWidth: .infinity).task { await model.loadOlder() }
                }
                if model.showsEmptyState { Text(ChatViewModel.emptyText).foregroundStyle(.secondary) }
                ForEach(model.items) { item in
                    switch item {
                    case .separator(let label):
                        Text(label).font(.caption).frame(maxWidth: .infinity)
                    case .message(let message, let isMine, let time, let sender):
                        VStack(alignment: .leading, spacing: 2) {
                            if let sender { Text(sender).font(.caption.bold()).foregroundStyle(.secondary) }
                            BubbleView(message: message, isMine: isMine, time: time, model: model)
                        }
                        .onAppear { if !isMine, let seq = message.seq { model.markVisible(upTo: seq) } }
                    case .entry(let entry, let lines, _):
                        // A membership change ("Ada added Grace"): a centred line of its own.
                        Text(lines.joined(separator: "\n")).font(.caption).foregroundStyle(.secondary).frame(maxWidth: .infinity)
                            .onAppear { if let seq = entry.seq { model.markVisible(upTo: seq) } }
                    }
                }
            }
            .listStyle(.plain)
            .onChange(of: model.items.last?.id) { _, last in
                if let last { withAnimation { proxy.scrollTo(last, anchor: .bottom) } }
            }
        }
    }

    private var composer: some View {
        HStack(alignment: .bottom) {
            TextField("Message", text: $model.messageText, axis: .vertical).lineLimit(1...6)
            if model.showsCharacterCounter {
                Text("\(model.remainingCharacters)").font(.caption).foregroundStyle(model.remainingCharacters < 0 ? .red : .secondary)
            }
            Button("Send") { model.send() }.disabled(!model.canSend)
        }
        .padding(8)
    }
}

/// A bubble with the time and, for my messages, the status inside it, bottom right.
struct BubbleView: View {
    let message: TimelineItem
    let isMine: Bool
    let time: String
    let model: ChatViewModel

    var body: some View {
        HStack {
            if isMine { Spacer(minLength: 40) }
            VStack(alignment: .trailing, spacing: 2) {
                Text(message.text)
                HStack(spacing: 4) {
                    Text(time)
                    if isMine, let status = message.status { StatusMark(status: status) }
                }
                .font(.caption2).foregroundStyle(.secondary)
                if case .failed(let reason) = message.status {
                    Text(reason).font(.caption2).foregroundStyle(.red)
                    HStack {
                        Button("Retry") { model.retry(message) }
                        Button("Delete", role: .destructive) { model.delete(message) }
                    }
                    .font(.caption)
                }
            }
            .padding(8)
            .background(RoundedRectangle(cornerRadius: 12).fill(isMine ? Color.blue.opacity(0.15) : Color.gray.opacity(0.15)))
            if !isMine { Spacer(minLength: 40) }
        }
        .listRowSeparator(.hidden)
    }
}

/// Clock, ✓, ✓✓, blue ✓✓, or a red failure mark.
struct StatusMark: View {
    let status: MessageStatus

    var body: some View {
        switch status {
        case .sending: Image(systemName: "clock").accessibilityLabel("Sending")
        case .sent: Text("✓").accessibilityLabel("Sent")
        case .delivered: Text("✓✓").accessibilityLabel("Delivered")
        case .read: Text("✓✓").foregroundStyle(.blue).accessibilityLabel("Read")
        case .failed: Image(systemName: "exclamationmark.circle.fill").foregroundStyle(.red).accessibilityLabel("Not sent")
        }
    }
}
