import Foundation
import ScreenRecording
public import ScreenTransportClient
import ScreenTransport

/// Follows a live HLS stream as a player does and reports its timed metadata in order (the player side of
/// seed 003): each segment's `EXT-X-PROGRAM-DATE-TIME`, each `EXT-X-DATERANGE` when it starts (and again
/// when it gets its end), and each frame's ID3 metadata from the `emsg` boxes ahead of its fragment.
/// Starts three segments from the live edge, as players do; reloads the playlist every half target duration.
public struct HLSFollower: Sendable {
    public enum Event: Sendable, Equatable {
        case segment(sequence: Int, programDateTime: String?, duration: Double)
        /// A date range as listed (attribute → value), when first seen and when its end is first known.
        case dateRange([String: String])
        /// One frame's metadata: its presentation time in seconds on the stream's timeline, the bytes
        /// (`PRIV`), the text (`TXXX`, when it is text) and the capture wall-clock time.
        case frame(seconds: Double, metadata: [UInt8], text: String?, captureTime: String?)
    }

    public let url: String
    private let http: RelayHTTPClient

    public init(url: String, trust: ClientTrust = .system) {
        self.url = url
        var http = RelayHTTPClient(trust: trust, peer: "the HLS server")
        http.maximumBody = 64 << 20
        self.http = http
    }

    /// Reads until `segmentLimit` segments were read (nil: until the playlist ends or the task is cancelled).
    public func run(segments segmentLimit: Int? = nil, emit: (Event) -> Void) async throws {
        var mediaURL = url
        // The URL may name the multivariant playlist (its first variant is followed) or the media playlist.
        var fetched: String? = try await text(url)
        if let variant = HLSPlaylistParser.variants(fetched!).first {
            mediaURL = try resolve(variant, against: url)
            fetched = nil
        }
        var next: Int?
        var announced: [String: Bool] = [:]  // date range id → its end was announced
        var read = 0
        while true {
            let playlistText: String
            if let already = fetched {
                playlistText = already
                fetched = nil
            } else {
                playlistText = try await text(mediaURL)
            }
            guard let playlist = HLSPlaylistParser.media(playlistText) else {
                throw RelayClientError(.closed, "\(mediaURL) is not an HLS media playlist")
            }
            let start = next ?? max(playlist.mediaSequence, playlist.mediaSequence + playlist.segments.count - 3)
            for segment in playlist.segments where segment.sequence >= start {
                for range in segment.dateRanges {
                    let id = range["ID"] ?? ""
                    let ended = range["END-DATE"] != nil || range["DURATION"] != nil
                    if announced[id] == nil || (ended && announced[id] == false) {
                        announced[id] = ended
                        emit(.dateRange(range))
                    }
                }
                emit(.segment(sequence: segment.sequence, programDateTime: segment.programDateTime, duration: segment.duration))
                let bytes = try await data(try resolve(segment.uri, against: mediaURL))
                for event in TimedMetadataReader.events(in: bytes) where event.schemeIdentifier == "https://aomedia.org/emsg/ID3" {
                    guard let frames = TimedMetadataReader.id3Frames(event.message) else { continue }
                    emit(.frame(
                        seconds: event.seconds, metadata: frames.private[ID3MetadataTag.ownerIdentifier] ?? [],
                        text: frames.text[ID3MetadataTag.metadataDescription], captureTime: frames.text[ID3MetadataTag.captureTimeDescription]))
                }
                next = segment.sequence + 1
                read += 1
                if let segmentLimit, read >= segmentLimit { return }
            }
            // Ranges whose end appears while their segment is still listed.
            for range in playlist.segments.flatMap(\.dateRanges) {
                let id = range["ID"] ?? ""
                if announced[id] == false, range["END-DATE"] != nil || range["DURATION"] != nil {
                    announced[id] = true
                    emit(.dateRange(range))
                }
            }
            if playlist.ended { return }
            try await Task.sleep(for: .milliseconds(Int(max(0.25, playlist.targetDuration / 2) * 1000)))
        }
    }

    private func text(_ url: String) async throws -> String {
        String(decoding: try await data(url), as: UTF8.self)
    }

    private func data(_ url: String) async throws -> [UInt8] {
        let response = try await http.send("GET", url)
        guard response.status == 200 else {
            let reason = String(decoding: response.body.prefix(300), as: UTF8.self)
            throw RelayClientError(.unreachable, "\(url) answered \(response.status): \(reason)")
        }
        return Array(response.body)
    }

    private func resolve(_ reference: String, against base: String) throws -> String {
        guard let resolved = URL(string: reference, relativeTo: URL(string: base))?.absoluteString else {
            throw RelayClientError(.closed, "cannot resolve \(reference) against \(base)")
        }
        return resolved
    }
}
