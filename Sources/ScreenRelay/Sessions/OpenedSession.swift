extension RelayServer {
    /// A session made and its tokens minted, before the relay necessarily listens (its URLs need the port).
    public struct OpenedSession: Sendable {
        public let sessionId: String
        /// The publisher's token.
        public let token: String
        let viewerToken: String
    }
}
