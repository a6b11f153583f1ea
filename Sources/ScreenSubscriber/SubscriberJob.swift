import Foundation
public import ScreenMedia
public import ScreenService
import ScreenTransportClient

/// What screensub was asked to do: read a recording, subscribe to a live stream, chat, or follow HLS.
public enum SubscriberJob: Sendable {
    case recording(RecordingDump)
    case live(LiveSubscription)
    case chat(ChatSession)
    case hls(HLSMetadataFollow)

    /// Does it, printing through `output`; a failure is the sentence and exit status the command ends with.
    public func run(output: JobOutput) async throws(CommandFailure) {
        switch self {
        case .recording(let dump): try dump.run(output: output)
        case .live(let subscription): try await subscription.run(output: output)
        case .chat(let chat): try await chat.run(output: output)
        case .hls(let follow): try await follow.run(output: output)
        }
    }
}

/// Where a job's lines go: what it reports to standard output at once (scripts follow it as it comes), remarks
/// on the way (a retry, a refusal) to standard error after the command's name.
public struct JobOutput: Sendable {
    public var line: @Sendable (String) -> Void
    public var remark: @Sendable (String) -> Void

    public init(line: @escaping @Sendable (String) -> Void, remark: @escaping @Sendable (String) -> Void) {
        self.line = line
        self.remark = remark
    }

    /// Standard output, and standard error as `NAME: remark`.
    public static func standard(name: String) -> JobOutput {
        JobOutput(line: printNow, remark: { FileHandle.standardError.write(Data("\(name): \($0)\n".utf8)) })
    }
}

extension SubscriberOptions {
    /// The job these options ask for (nil: none, which validation does not let through).
    public var job: SubscriberJob? {
        let token = server == nil ? nil : try? resolvedToken()
        let trust = ClientTrust(caFile: caFile)
        if let server, let token, chat {
            return .chat(ChatSession(server: server, token: token, to: to, json: json, trust: trust))
        }
        if let hls {
            return .hls(HLSMetadataFollow(url: hls, trust: trust, segments: segments, printsFrames: printMetadata, json: json))
        }
        if let server, let token {
            return .live(LiveSubscription(
                server: server, token: token, trust: trust, stream: stream, frameLimit: count, decodes: !noDecode,
                decodesOnly: decodesOnly.map(SubscriberOptions.codecStrings),
                framesDirectory: frames, outputPath: output, printsMetadata: printMetadata, json: json, verbose: verbose))
        }
        return input.map { .recording(RecordingDump(path: $0, decodes: !noDecode, framesDirectory: frames, printsMetadata: printMetadata, json: json)) }
    }
}
