public import ScreenMedia
public import ScreenService
import ScreenSession
public import ScreenTransportClient

/// `screensub --hls URL`: follows a live HLS stream as a player does and prints its timed metadata in order.
public struct HLSMetadataFollow: Sendable {
    public let url: String
    public let trust: ClientTrust
    /// Stop after this many segments (nil: while the stream lasts).
    public let segments: Int?
    /// Each frame's ID3 metadata too (`--print-metadata`), besides segments and date ranges.
    public let printsFrames: Bool
    public let json: Bool

    public func run(output: JobOutput) async throws(CommandFailure) {
        do {
            var follower = HLSFollower(url: url, trust: trust)
            // A busy or briefly unreachable server is tried again for a while (30 s), as players do; each time in a line.
            follower.onRetry = output.remark
            try await follower.run(segments: segments) { event in
                if case .frame = event, !printsFrames { return }
                output.line(event.line(json: json))
            }
        } catch {
            throw CommandFailure(ExitStatus.runtimeFailure, "\(error)")
        }
    }
}
