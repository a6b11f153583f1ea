extension RelayPublisher {
    /// The publisher's connection as `screenpub status` shows it.
    public struct ConnectionStatus: Sendable {
        /// Connected and welcomed by the relay.
        public var connected = false
        public var sessionId: String?
        public var streamId: UInt32?
        /// Other connections in the session (viewers, screensub, moderators).
        public var otherConnections = 0
        /// The last connection problem, cleared on connecting.
        public var lastProblem: String?
        /// Whether the relay has welcomed this publisher at least once since it started.
        public var everConnected = false
        /// The encoder's target now, what the uplink was measured to deliver (kbit/s) and why the target is what
        /// it is; nil without an uplink controller.
        public var targetKbps: Int?
        public var uplinkKbps: Int?
        public var rateReason: String?
    }
}
