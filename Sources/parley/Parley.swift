import ArgumentParser

/// The one binary: `parley serve`, and (as they land) the terminal client, bench and admin helpers.
@main
struct Parley: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parley",
        abstract: "Self-hosted real-time messaging: direct chats and groups.",
        subcommands: [Serve.self, Chat.self, Bench.self, Torture.self])
}
