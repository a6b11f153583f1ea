import CAVFormat
import CAVFormatShims
import Foundation
public import ScreenMedia

/// One video frame read back from a recording, with its metadata cue when the file has one.
public struct RecordedFrame: Sendable {
    public var index: Int
    /// Presentation time in the file.
    public var timestamp: MediaTime
    public var isKeyframe: Bool
    public var payload: [UInt8]
    public var cue: MetadataCue?
}

/// Reads the video frames and metadata cues of a WebM or Matroska file written by ``WebMWriter`` (or any
/// VP8/VP9/AV1 WebM, any H.264 Matroska). H.264 frames come back as the Annex B access units screenpub sends
/// and decodes, their parameter sets ahead of every keyframe.
public final class WebMReader {
    public let path: String
    public let codec: VideoCodec
    public let width: Int
    public let height: Int
    public let hasMetadataTrack: Bool
    /// The video type and frame rate screenpub recorded in the file's tags (nil for other files).
    public let videoType: VideoType?
    public let estimatedFramesPerSecond: Double?

    private var context: UnsafeMutablePointer<AVFormatContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private let videoStream: Int32
    private let metadataStream: Int32
    private let videoTimeBase: AVRational
    private let metadataTimeBase: AVRational
    /// What the H.264 track's `avcC` says (its samples' length size, its parameter sets); nil for other codecs.
    private let h264Configuration: H264DecoderConfiguration?
    private var pendingCues: [Int64: MetadataCue] = [:]
    private var nextIndex = 0

    public init(path: String) throws(RecordingError) {
        self.path = path
        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        let openStatus = avformat_open_input(&context, path, nil, nil)
        guard openStatus >= 0, let context else {
            throw RecordingError(.cannotOpen, "cannot open \(path): \(avErrorText(openStatus))")
        }
        self.context = context
        _ = avformat_find_stream_info(context, nil)
        var video: Int32 = -1, cues: Int32 = -1
        for index in 0..<Int(context.pointee.nb_streams) {
            guard let stream = context.pointee.streams[index] else { continue }
            let parameters = stream.pointee.codecpar.pointee
            if parameters.codec_type == AVMEDIA_TYPE_VIDEO && video < 0 {
                video = Int32(index)
            } else if parameters.codec_id == AV_CODEC_ID_WEBVTT && cues < 0 {
                cues = Int32(index)
            }
        }
        guard video >= 0, let stream = context.pointee.streams[Int(video)] else {
            avformat_close_input(&self.context)
            throw RecordingError(.unsupportedContent, "\(path) has no video track")
        }
        let parameters = stream.pointee.codecpar.pointee
        guard let codec = videoCodec(of: parameters.codec_id) else {
            avformat_close_input(&self.context)
            throw RecordingError(.unsupportedContent, "\(path) holds video that is not VP8, VP9, AV1 or H.264")
        }
        if codec == .h264 {
            let record = UnsafeRawBufferPointer(start: parameters.extradata, count: Int(max(0, parameters.extradata_size)))
            guard let configuration = H264DecoderConfiguration(record: record) else {
                avformat_close_input(&self.context)
                throw RecordingError(.unsupportedContent, "\(path) has an H.264 track without a readable avcC record (its parameter sets)")
            }
            h264Configuration = configuration
        } else {
            h264Configuration = nil
        }
        self.codec = codec
        width = Int(parameters.width)
        height = Int(parameters.height)
        videoStream = video
        // The file's word: a time base that is not a positive fraction is read as milliseconds (Matroska's usual).
        let base = stream.pointee.time_base
        videoTimeBase = base.num > 0 && base.den > 0 ? base : AVRational(num: 1, den: 1000)
        metadataStream = cues
        metadataTimeBase = (cues >= 0 ? context.pointee.streams[Int(cues)]?.pointee.time_base : nil) ?? AVRational(num: 1, den: 1000)
        hasMetadataTrack = cues >= 0
        func tag(_ name: String) -> String? {
            av_dict_get(context.pointee.metadata, name, nil, 0).flatMap { $0.pointee.value.map { String(cString: $0) } }
        }
        videoType = tag(WebMTags.videoType).flatMap(VideoType.init(rawValue:))
        estimatedFramesPerSecond = tag(WebMTags.estimatedFramesPerSecond).flatMap(Double.init)
        packet = av_packet_alloc()
    }

    deinit {
        av_packet_free(&packet)
        avformat_close_input(&context)
    }

    /// The next video frame, or nil at the end. A file cut short (writer killed) ends at its last whole frame.
    public func nextFrame() throws(RecordingError) -> RecordedFrame? {
        guard let context, let packet else { return nil }
        while true {
            let status = av_read_frame(context, packet)
            if status == CAVFormatShims_averrorEOF() { return nil }
            guard status >= 0 else {
                // A truncated tail reads as an I/O or data error after the last complete frame.
                if status == -Int32(EIO) || status == CAVFormatShims_averrorEOF() { return nil }
                throw RecordingError(.readFailed, "reading \(path) failed: \(avErrorText(status))")
            }
            defer { av_packet_unref(packet) }
            let stream = packet.pointee.stream_index
            let data = UnsafeRawBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size))
            if stream == metadataStream {
                if let cue = Self.parseCue(data) {
                    pendingCues[milliseconds(packet.pointee.pts, metadataTimeBase)] = cue
                }
                continue
            }
            guard stream == videoStream else { continue }
            let pts = packet.pointee.pts != Int64.min ? packet.pointee.pts : packet.pointee.dts
            let key = milliseconds(pts, videoTimeBase)
            let isKeyframe = (packet.pointee.flags & AV_PKT_FLAG_KEY) != 0
            var payload = Array(data)
            if let h264Configuration {
                guard let unit = h264Configuration.accessUnit(sample: data, isKeyframe: isKeyframe) else {
                    throw RecordingError(.readFailed, "frame \(nextIndex) of \(path) is not H.264 as its track says (NAL unit lengths that do not add up)")
                }
                payload = unit
            }
            let frame = RecordedFrame(
                index: nextIndex,
                timestamp: MediaTime(value: pts.multipliedReportingOverflow(by: Int64(videoTimeBase.num)).overflow
                    ? (pts < 0 ? .min : .max) : pts &* Int64(videoTimeBase.num), timescale: videoTimeBase.den),
                isKeyframe: isKeyframe,
                payload: payload,
                cue: pendingCues.removeValue(forKey: key))
            nextIndex += 1
            return frame
        }
    }

    /// Every remaining frame.
    public func readAll() throws(RecordingError) -> [RecordedFrame] {
        var frames: [RecordedFrame] = []
        while let frame = try nextFrame() { frames.append(frame) }
        return frames
    }

    private func milliseconds(_ value: Int64, _ base: AVRational) -> Int64 {
        av_rescale_q(value, base, AVRational(num: 1, den: 1000))
    }

    private struct CueJSON: Decodable {
        var captureTime: String
        var wallClock: String
        var metadataBase64: String
    }

    /// Parses one cue's JSON text; nil for cues this reader does not understand.
    static func parseCue(_ text: UnsafeRawBufferPointer) -> MetadataCue? {
        guard let json = try? JSONDecoder().decode(CueJSON.self, from: Data(text)),
            let bytes = Data(base64Encoded: json.metadataBase64),
            let metadata = try? FrameMetadata(bytes: bytes)
        else { return nil }
        let parts = json.captureTime.split(separator: "/")
        guard parts.count == 2, let value = Int64(parts[0]), let scale = Int32(parts[1]), scale > 0 else { return nil }
        return MetadataCue(
            metadata: metadata, captureTime: MediaTime(value: value, timescale: scale),
            wallClock: parseISO8601(json.wallClock) ?? WallClockTime(secondsSince1970: 0, nanoseconds: 0))
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS.mmmZ` as written by ``FrameMetadata/iso8601(_:)``.
    static func parseISO8601(_ text: String) -> WallClockTime? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = formatter.date(from: text) else { return nil }
        return WallClockTime(millisecondsSince1970: Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }
}

@available(*, unavailable, message: "a libavformat context belongs to one thread")
extension WebMReader: Sendable {}
