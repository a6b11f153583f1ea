public import ArgumentParser
public import ScreenWire
import ScreenTransportClient

extension Role: ExpressibleByArgument {
    /// "viewer" is what people call a subscriber.
    public init?(argument: String) {
        self.init(rawValue: argument == "viewer" ? "subscriber" : argument)
    }
}

/// `screenrelay token SESSION`: mints a token for a session.
public struct TokenCommand: AsyncParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Mint a token for a session; print it and, for a subscriber or moderator, the viewer link.",
        discussion: """
            Examples:
              screenrelay token 3f0c… --name Ada                      # a viewer link for Ada, valid 24 h
              screenrelay token 3f0c… --role moderator --expires 2h   # may record and see archives
              screenrelay token 3f0c… --role publisher                # for screenpub --token
            """)

    @OptionGroup var options: AdminOptions

    @Argument(help: "The session's id (screenrelay sessions lists them).")
    var session: String

    @Option(help: "What the token allows: subscriber (watch and chat; also: viewer), moderator (also record), publisher (share).")
    var role: Role = .subscriber

    @Option(help: "The participant's name, shown in chat and join lines (stored as name=… in the token's connection data).")
    var name: String?

    @Option(help: "More connection data for the token, in URL-query form (team=blue&seat=4).")
    var data: String?

    @Option(help: "How long the token is valid: seconds, or with a unit: 90s, 15m, 2h, 7d (at most 30d).")
    var expires = "24h"

    public func validate() throws {
        guard let seconds = Lifetime.seconds(expires) else {
            throw ValidationError("--expires takes a number of seconds or one with a unit (90s, 15m, 2h, 7d), got '\(expires)'")
        }
        guard seconds <= 30 * 86400 else { throw ValidationError("--expires must be at most 30 days, got \(expires)") }
    }

    public func run() async throws {
        let client = try options.client()
        let lifetime = Lifetime.seconds(expires) ?? 86400
        let minted = try await options.call { () async throws(SessionAPIError) in
            try await client.mintToken(session: session, role: role, name: name, data: data, expiresIn: lifetime)
        }
        options.print(RelayAdminOutput.minted(minted), json: minted)
    }
}
