import ParleySDK

extension TerminalChat {
    /// `/name NEW NAME`: my display name from now on, with the server's rules (its message says what
    /// is wrong); everyone who shares a chat with me sees it at once.
    func changeName(_ name: String) async {
        guard !name.isEmpty else { return say("Usage: /name NEW NAME (others see you as “\(client.me.displayName)”)") }
        do {
            let me = try await client.setDisplayName(name)
            say("Others now see you as “\(me.displayName)”.")
        } catch {
            say("Could not change your name: \(error)")
        }
    }
}
