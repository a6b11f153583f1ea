/// The timing an H.264 sequence parameter set can carry in its VUI (§E.1.1 `timing_info`): a clock of
/// ``timeScale`` Hz whose tick is ``unitsInTick`` of its cycles, and `fixed_frame_rate_flag` 0, for frames come when
/// the screen changes.
///
/// openh264 writes no timing, and a player that reads frame durations from the SPS rather than from the container
/// then has none: GStreamer's h264parse (which WebKitGTK's Media Source Extensions put after qtdemux) drops the
/// MP4 sample durations and gives each frame two ticks of this clock (§E.2.1, a frame as two fields), or no
/// duration without it — which WebKit buffers as 1/60 s, a gap after every frame. ``sequenceParameterSet(_:)``
/// adds the timing to an SPS that has none.
public struct H264Timing: Sendable, Hashable {
    public var unitsInTick: UInt32
    public var timeScale: UInt32

    public init(unitsInTick: UInt32, timeScale: UInt32) {
        (self.unitsInTick, self.timeScale) = (unitsInTick, timeScale)
    }

    /// A clock on which a frame (two ticks) lasts `seconds`, to 1/90 000 s (the MP4 track's clock).
    public init(frameSeconds seconds: Double) {
        let ticks = (seconds * 90_000).rounded()
        self.init(unitsInTick: ticks >= 1 ? UInt32(min(ticks, Double(UInt32.max))) : 1, timeScale: 180_000)
    }

    /// The timing of the sequence parameter set NAL unit `unit`; nil when it has none or cannot be read.
    public init?<Unit: Collection<UInt8>>(sequenceParameterSet unit: Unit) {
        guard let header = unit.first, header & 0x1F == H264ParameterSets.sequenceParameterSetType else { return nil }
        let payload = H264ParameterSets.removingEmulationPrevention(unit.dropFirst())
        let timing = payload.withUnsafeBytes { bytes -> H264Timing? in
            guard let place = Self.timingPlace(bytes), place.hasTiming else { return nil }
            var bits = BitReader(bytes)
            guard bits.skip(place.position + 1), let units = bits.read(32), let scale = bits.read(32) else { return nil }
            return H264Timing(unitsInTick: UInt32(units), timeScale: UInt32(scale))
        }
        guard let timing else { return nil }
        self = timing
    }

    /// How long a frame lasts for a parser that counts two ticks to a frame.
    public var frameSeconds: Double { 2 * Double(unitsInTick) / Double(timeScale) }

    /// The sequence parameter set NAL unit `unit` (its header and its payload with emulation prevention, as an
    /// access unit and `avcC` hold it) with this timing in its VUI: the VUI is added if there is none, and
    /// everything else is kept bit for bit. `unit` as it is when it has timing already; nil when it is no SPS
    /// this can read.
    public func sequenceParameterSet<Unit: Collection<UInt8>>(_ unit: Unit) -> [UInt8]? {
        guard let header = unit.first, header & 0x1F == H264ParameterSets.sequenceParameterSetType else { return nil }
        let payload = H264ParameterSets.removingEmulationPrevention(unit.dropFirst())
        return payload.withUnsafeBytes { bytes -> [UInt8]? in
            guard let stopBit = Self.stopBitPosition(bytes), let place = Self.timingPlace(bytes), place.position < stopBit else { return nil }
            if place.hasTiming { return Array(unit) }
            var reader = BitReader(bytes)
            var writer = BitWriter()
            guard writer.copy(place.position, from: &reader), reader.skip(1) else { return nil }
            if place.hasVUI {
                writeTiming(&writer)
                // The VUI's rest (HRD, picture structure, bitstream restrictions) as it was.
                guard writer.copy(stopBit - reader.position, from: &reader) else { return nil }
            } else {
                writer.write(1, bits: 1)  // vui_parameters_present_flag
                writer.write(0, bits: 4)  // no aspect ratio, overscan, video signal type or chroma location
                writeTiming(&writer)
                writer.write(0, bits: 4)  // no NAL or VCL HRD, no picture structure, no bitstream restrictions
            }
            writer.writeTrailingBits()
            return [header] + H264ParameterSets.addingEmulationPrevention(writer.bytes)
        }
    }

    private func writeTiming(_ writer: inout BitWriter) {
        writer.write(1, bits: 1)  // timing_info_present_flag
        writer.write(Int(unitsInTick), bits: 32)
        writer.write(Int(timeScale), bits: 32)
        writer.write(0, bits: 1)  // fixed_frame_rate_flag
    }

    /// Where the SPS RBSP's `rbsp_stop_one_bit` is: its last one bit.
    private static func stopBitPosition(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard let last = bytes.lastIndex(where: { $0 != 0 }) else { return nil }
        return last * 8 + 7 - bytes[last].trailingZeroBitCount
    }

    /// The bit of the SPS RBSP (§7.3.2.1.1, §E.1.1) that says whether there is timing: `timing_info_present_flag`
    /// in a VUI, or `vui_parameters_present_flag` when there is no VUI.
    private static func timingPlace(_ bytes: UnsafeRawBufferPointer) -> (position: Int, hasVUI: Bool, hasTiming: Bool)? {
        var bits = BitReader(bytes)
        guard let profile = bits.read(8), H264ParameterSets.knownProfiles.contains(profile), bits.skip(16), bits.readExpGolomb() != nil else { return nil }
        if H264ParameterSets.profilesWithChromaFormat.contains(profile) {
            guard let chromaFormat = bits.readExpGolomb(), chromaFormat <= 3, chromaFormat != 3 || bits.skip(1),
                bits.readExpGolomb() != nil, bits.readExpGolomb() != nil, bits.skip(1), let scalingMatrix = bits.read(1)
            else { return nil }
            if scalingMatrix == 1 {
                for list in 0..<(chromaFormat == 3 ? 12 : 8) {
                    guard let present = bits.read(1) else { return nil }
                    if present == 1, !skipScalingList(&bits, size: list < 6 ? 16 : 64) { return nil }
                }
            }
        }
        guard bits.readExpGolomb() != nil, let pictureOrderCountType = bits.readExpGolomb() else { return nil }
        switch pictureOrderCountType {
        case 0:
            guard bits.readExpGolomb() != nil else { return nil }
        case 1:
            guard bits.skip(1), bits.readSignedExpGolomb() != nil, bits.readSignedExpGolomb() != nil,
                let cycle = bits.readExpGolomb(), cycle <= 255
            else { return nil }
            for _ in 0..<cycle where bits.readSignedExpGolomb() == nil { return nil }
        default:
            break
        }
        // max_num_ref_frames, gaps_in_frame_num_value_allowed_flag, the picture's size in macroblocks.
        guard bits.readExpGolomb() != nil, bits.skip(1), bits.readExpGolomb() != nil, bits.readExpGolomb() != nil,
            let framesOnly = bits.read(1), framesOnly == 1 || bits.skip(1), bits.skip(1), let cropping = bits.read(1)
        else { return nil }
        if cropping == 1 {
            for _ in 0..<4 where bits.readExpGolomb() == nil { return nil }
        }
        let vuiFlag = bits.position
        guard let hasVUI = bits.read(1) else { return nil }
        guard hasVUI == 1 else { return (vuiFlag, false, false) }
        // Aspect ratio (an extended one is 32 bits more), overscan, video signal type and colour, chroma location.
        guard let aspectRatio = bits.read(1) else { return nil }
        if aspectRatio == 1 {
            guard let indicator = bits.read(8), indicator != 255 || bits.skip(32) else { return nil }
        }
        guard let overscan = bits.read(1), overscan == 0 || bits.skip(1), let signalType = bits.read(1) else { return nil }
        if signalType == 1 {
            guard bits.skip(4), let colour = bits.read(1), colour == 0 || bits.skip(24) else { return nil }
        }
        guard let chromaLocation = bits.read(1) else { return nil }
        if chromaLocation == 1 {
            guard bits.readExpGolomb() != nil, bits.readExpGolomb() != nil else { return nil }
        }
        let timingFlag = bits.position
        guard let hasTiming = bits.read(1) else { return nil }
        return (timingFlag, true, hasTiming == 1)
    }

    /// Skips a `scaling_list()` (§7.3.2.1.1.1) of `size` entries.
    private static func skipScalingList(_ bits: inout BitReader, size: Int) -> Bool {
        var (last, next) = (8, 8)
        for _ in 0..<size {
            if next != 0 {
                guard let delta = bits.readSignedExpGolomb() else { return false }
                next = (last + delta + 256) % 256
            }
            last = next == 0 ? last : next
        }
        return true
    }
}
