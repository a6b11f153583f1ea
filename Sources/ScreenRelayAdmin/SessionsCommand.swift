public import ArgumentParser
import ScreenTransportClient

/// `screenrelay sessions`: the relay's sessions as a table (or JSON).
public struct SessionsCommand: AsyncParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "sessions",
        abstract: "List the relay's sessions: what is published, how many watch, what is recorded.",
        discussion: """
            Examples:
              screenrelay sessions
              screenrelay sessions --server https://relay.example.org --json
            """)

    @OptionGroup var options: AdminOptions

    public func run() async throws {
        let client = try options.client()
        let sessions = try await options.call { () async throws(SessionAPIError) in try await client.sessions() }
        options.print(RelayAdminOutput.sessions(sessions), json: sessions)
    }
}
