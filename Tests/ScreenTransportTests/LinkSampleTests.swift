import ScreenTransport
import Testing

/// `struct tcp_info` read as the relay and the publisher read their sockets.
@Suite struct LinkSampleTests {
    /// A `tcp_info` of this kernel's 232 bytes with these fields at their offsets.
    static func info(
        appLimited: Bool, mss: UInt32, unacked: UInt32, notSent: UInt32, rate: UInt64, acknowledged: UInt64 = 0, state: UInt8 = 1
    ) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 232)
        bytes[0] = state
        func put<Value: FixedWidthInteger>(_ value: Value, at offset: Int) {
            withUnsafeBytes(of: value.littleEndian) { for (index, byte) in $0.enumerated() { bytes[offset + index] = byte } }
        }
        if appLimited { bytes[7] = 1 }
        put(mss, at: 16)
        put(unacked, at: 24)
        put(acknowledged, at: 120)
        put(notSent, at: 144)
        put(rate, at: 160)
        return bytes
    }

    @Test func pendingIsWhatIsNotSentAndTheUnacknowledgedSegmentsAndTheRateOnlyWhenNotAppLimited() {
        let busy = Self.info(appLimited: false, mss: 1448, unacked: 10, notSent: 5000, rate: 125_000, acknowledged: 7_000_000_000)
        let sample = busy.withUnsafeBytes { LinkSample(tcpInfo: $0) }
        #expect(sample == LinkSample(deliveryBytesPerSecond: 125_000, pendingBytes: 5000 + 14_480, acknowledgedBytes: 7_000_000_000))
        let idle = Self.info(appLimited: true, mss: 1448, unacked: 0, notSent: 0, rate: 125_000)
        #expect(idle.withUnsafeBytes { LinkSample(tcpInfo: $0) } == LinkSample(deliveryBytesPerSecond: nil, pendingBytes: 0))
    }

    @Test func aPeerThatShutItsSideOrResetIsSaidToHaveClosed() {
        func closed(_ state: UInt8) -> Bool? {
            Self.info(appLimited: true, mss: 1448, unacked: 0, notSent: 0, rate: 0, state: state).withUnsafeBytes { LinkSample(tcpInfo: $0) }?.peerClosed
        }
        #expect(closed(1) == false, "ESTABLISHED")
        #expect(closed(8) == true, "CLOSE_WAIT: its FIN came")
        #expect(closed(7) == true, "CLOSE: a reset")
        #expect(closed(4) == false, "FIN_WAIT1: this side's FIN, not the peer's")
    }

    @Test func aShortInfoIsNoneAndTheLargestCountsDoNotTrap() {
        let older = Self.info(appLimited: false, mss: 1, unacked: 1, notSent: 1, rate: 1).prefix(167)
        #expect(older.withUnsafeBytes { LinkSample(tcpInfo: $0) } == nil, "a kernel whose tcp_info ends before the delivery rate")
        let largest = Self.info(appLimited: false, mss: .max, unacked: .max, notSent: .max, rate: .max)
        let sample = largest.withUnsafeBytes { LinkSample(tcpInfo: $0) }
        #expect(sample?.pendingBytes == .max)
    }
}
