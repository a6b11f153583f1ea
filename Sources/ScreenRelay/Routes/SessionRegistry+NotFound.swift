import Hummingbird

extension SessionRegistry {
    /// The session `sessionId`, or the API's 404.
    func existingHub(_ sessionId: String) async throws -> SessionHub {
        guard let hub = hub(sessionId) else { throw HTTPError(.notFound, message: "there is no session \(sessionId)") }
        return hub
    }
}
