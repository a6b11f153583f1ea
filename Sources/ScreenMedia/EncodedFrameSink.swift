/// Where encoded frames go: a file, a relay connection, a loopback to a subscriber.
public protocol EncodedFrameSink: AnyObject {
    /// Takes one encoded frame; the payload is lent for this call only.
    func write(_ frame: EncodedFrame) throws
    /// Completes the output (writes indexes, closes connections). Called once, at the end.
    func finish() throws
}
