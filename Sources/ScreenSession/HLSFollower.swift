import Foundation
import ScreenRecording
public import ScreenTransportClient
import ScreenTransport

/// Follows a live HLS stream as a player does and reports its timed metadata in order (the player side of
/// seed 003): each segment's `EXT-X-PROGRAM-DATE-TIME`, each `EXT-X-DATERANGE` when it starts (and again
/// when it gets its end), and each frame's ID3 metadata from the `emsg` boxes ahead of its fragment.
/// From an LL-HLS server it starts at the newest part a keyframe starts and follows part by part with blocking
/// reloads; from another, three segments from the live edge, reloading the playlist every half target duration.
public struct HLSFollower: Sendable {
    public enum Event: Sendable, Equatable {
        /// The start of a segment's frames; its duration is nil while it is being written (an LL-HLS server lists
        /// its parts before it ends).
        case segment(sequence: Int, programDateTime: String?, duration: Double?)
        /// A date range as listed (attribute → value), when first seen and when its end is first known.
        case dateRange([String: String])
        /// One frame's metadata: its presentation time in seconds on the stream's timeline, the bytes
        /// (`PRIV`), the text (`TXXX`, when it is text) and the capture wall-clock time.
        case frame(seconds: Double, metadata: [UInt8], text: String?, captureTime: String?)
    }

    public let url: String
    private let http: RelayHTTPClient
    /// How long a request is tried again when the server answers 503 or 429 (busy: too many requests wait, or
    /// nothing came in time) or cannot be reached, counted from its first failure: as players do, after the
    /// server's `Retry-After` when it gives one, else backing off from half a second to five. Past it the error is
    /// thrown. Zero: never tried again.
    public var retryFor: Duration = .seconds(30)
    /// Told in one line why a request is tried again, and when.
    public var onRetry: (@Sendable (String) -> Void)?

    public init(url: String, trust: ClientTrust = .system) {
        self.url = url
        var http = RelayHTTPClient(trust: trust, peer: "the HLS server")
        http.maximumBody = 64 << 20
        self.http = http
    }

    /// Reads until `segmentLimit` segments were read (nil: until the playlist ends or the task is cancelled).
    public func run(segments segmentLimit: Int? = nil, emit: (Event) -> Void) async throws {
        var mediaURL = url
        // The URL may name the multivariant playlist (the stream as published is followed, not the H.264 variant
        // for players that decode nothing else) or a media playlist.
        let first = try await text(url)
        var fetched: String? = first
        if let variant = HLSPlaylistParser.preferredVariant(first) {
            mediaURL = try resolve(variant.uri, against: url)
            fetched = nil
        }
        var cursor: HLSPlaylistCursor?
        var blocking = false
        var announced: [String: Bool] = [:]  // date range id → its end was announced
        var started = 0
        var lastFrameSeconds = -Double.infinity
        // A part went missing and the playlist is read again once before giving up.
        var missedPartOnce = false
        while true {
            let playlistText: String
            if let already = fetched {
                playlistText = already
                fetched = nil
            } else if blocking, let cursor {
                // Held by the server until the next part is out.
                playlistText = try await text(mediaURL + (mediaURL.contains("?") ? "&" : "?") + cursor.blockingQuery)
            } else {
                playlistText = try await text(mediaURL)
            }
            guard let playlist = HLSPlaylistParser.media(playlistText) else {
                throw RelayClientError(.closed, "\(mediaURL) is not an HLS media playlist")
            }
            let position = cursor ?? HLSPlaylistCursor.start(playlist)
            var (fetches, next) = position.fetches(in: playlist)
            var wholeSegmentFetched: Int?
            for (index, fetch) in fetches.enumerated() where fetch.segment.sequence != wholeSegmentFetched {
                if fetch.startsSegment || (cursor == nil && index == 0) {
                    if let segmentLimit, started >= segmentLimit { return }
                    announce(fetch.segment.dateRanges, &announced, emit)
                    emit(.segment(sequence: fetch.segment.sequence, programDateTime: fetch.segment.programDateTime, duration: fetch.segment.duration))
                    started += 1
                }
                var bytes = try await data(try resolve(fetch.uri, against: mediaURL), missingIsNil: true)
                if bytes == nil, let whole = fetch.segment.uri {
                    // A reader slower than the stream: the server keeps the parts of the newest segments only, and
                    // this one's are gone; the whole segment is still there, and holds them.
                    bytes = try await data(try resolve(whole, against: mediaURL))
                    wholeSegmentFetched = fetch.segment.sequence
                }
                guard let bytes else {
                    // Further behind than the playlist read a moment ago (a starved machine): its segment has closed
                    // since, and its parts went. Read the playlist again from this part: the segment is whole there.
                    guard !missedPartOnce else {
                        throw RelayClientError(.unreachable, "\(fetch.uri) is no longer served and its segment is not closed")
                    }
                    missedPartOnce = true
                    next = HLSPlaylistCursor(sequence: fetch.segment.sequence, part: fetch.segment.parts.firstIndex { $0.uri == fetch.uri } ?? 0)
                    break
                }
                missedPartOnce = false
                for event in TimedMetadataReader.events(in: bytes) where event.schemeIdentifier == "https://aomedia.org/emsg/ID3" {
                    // A whole segment fetched after some of its parts repeats their frames.
                    guard event.seconds > lastFrameSeconds, let frames = TimedMetadataReader.id3Frames(event.message) else { continue }
                    lastFrameSeconds = event.seconds
                    emit(.frame(
                        seconds: event.seconds, metadata: frames.private[ID3MetadataTag.ownerIdentifier] ?? [],
                        text: frames.text[ID3MetadataTag.metadataDescription], captureTime: frames.text[ID3MetadataTag.captureTimeDescription]))
                }
            }
            cursor = next
            if missedPartOnce { continue }
            // Ranges listed ahead of what was reached: those that started meanwhile, and ends that appeared.
            announce(playlist.segments.filter { $0.sequence <= next.sequence }.flatMap(\.dateRanges), &announced, emit)
            if playlist.ended { return }
            blocking = playlist.canBlockReload && playlist.partTarget != nil
            if !blocking { try await Task.sleep(for: .milliseconds(Int(max(0.25, playlist.targetDuration / 2) * 1000))) }
        }
    }

    /// Emits each range not announced yet, and again once its end is first known.
    private func announce(_ ranges: [[String: String]], _ announced: inout [String: Bool], _ emit: (Event) -> Void) {
        for range in ranges {
            let id = range["ID"] ?? ""
            let ended = range["END-DATE"] != nil || range["DURATION"] != nil
            if announced[id] == nil || (ended && announced[id] == false) {
                announced[id] = ended
                emit(.dateRange(range))
            }
        }
    }

    private func text(_ url: String) async throws -> String {
        String(decoding: try await data(url) ?? [], as: UTF8.self)
    }

    /// The body of a 200 answer; nil for a 404 when `missingIsNil`, any other answer an error. A 503, a 429 or no
    /// answer is tried again for ``retryFor``.
    private func data(_ url: String, missingIsNil: Bool = false) async throws -> [UInt8]? {
        let failing = ContinuousClock.now
        var backoff = Duration.milliseconds(500)
        // The URL as said in a message: without its query, which may carry a token.
        let shown = String(url.prefix { $0 != "?" })
        while true {
            var reason = ""
            var delay = backoff
            var answered: RelayHTTPClient.Response?
            do {
                answered = try await http.send("GET", url)
            } catch {
                if Task.isCancelled { throw CancellationError() }
                reason = error.message.replacingOccurrences(of: url, with: shown)
            }
            if let answer = answered {
                if answer.status == 404 && missingIsNil { return nil }
                if answer.status == 200 { return Array(answer.body) }
                let body = String(decoding: answer.body.prefix(300), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                guard answer.status == 503 || answer.status == 429 else {
                    throw RelayClientError(.unreachable, "\(shown) answered \(answer.status): \(body)")
                }
                reason = "\(shown) answered \(answer.status) (\(body))"
                if let seconds = answer.header("Retry-After").flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }), seconds >= 0 {
                    delay = .seconds(min(seconds, 60))
                }
            }
            let spent = ContinuousClock.now - failing
            guard spent + delay <= retryFor else {
                throw RelayClientError(.unreachable, "\(reason); still failing after \(Int((spent / .seconds(1)).rounded())) s")
            }
            onRetry?("\(reason); trying again in \(Self.seconds(delay)) s")
            try await Task.sleep(for: delay)
            backoff = min(backoff * 2, .seconds(5))
        }
    }

    private static func seconds(_ duration: Duration) -> String {
        let value = duration / .seconds(1)
        return value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }

    private func resolve(_ reference: String, against base: String) throws -> String {
        guard let resolved = URL(string: reference, relativeTo: URL(string: base))?.absoluteString else {
            throw RelayClientError(.closed, "cannot resolve \(reference) against \(base)")
        }
        return resolved
    }
}
