public import ArgumentParser
import ScreenTransportClient

/// `screenrelay session create`: makes a session.
public struct SessionCommand: AsyncParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "session", abstract: "Make a session.", subcommands: [CreateSessionCommand.self])
}

struct CreateSessionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Make a session; print its id, the publisher's token, the relay's address and a viewer link.",
        discussion: """
            Examples:
              screenrelay session create --title "Friday demo"
              screenrelay session create --json | jq -r .token
            """)

    @OptionGroup var options: AdminOptions

    @Option(help: "The session's title, shown to viewers (one line, at most 200 characters).")
    var title: String?

    func run() async throws {
        let client = try options.client()
        let created = try await options.call { () async throws(SessionAPIError) in try await client.createSession(title: title) }
        options.print(RelayAdminOutput.created(created), json: created)
    }
}
