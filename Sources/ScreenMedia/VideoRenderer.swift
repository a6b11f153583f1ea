/// Receives decoded frames with their metadata (the seed's `renderer:didReceiveFrame:`).
public protocol VideoRenderer: AnyObject {
    /// One decoded picture with its capture time, wall clock and metadata; lent for this call only.
    func render(_ frame: VideoFrame) throws
}
