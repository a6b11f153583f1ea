// libFuzzer target for a whole relay session, not one parser: each input is read as a script of what clients
// do — connect with a role, publish and change stream properties with arbitrary numbers, send video and audio
// frames with arbitrary capture times, sizes, layers and flags, subscribe (with catch-up) and unsubscribe, ask for
// keyframes, take frames off,
// report link measures, let time pass, leave — played into the session's router (compiled in with it by
// Benchmarks/fuzz.sh) as the relay plays them. Every number goes through the same wire parsing as on the relay
// (the bounds of ControlMessage.parse, MediaMessage.parse), and every frame the router admits gets the time arithmetic of the
// recorder and the HLS packager. Nothing may trap; every welcome must fit a control message.
import ScreenMedia
import ScreenWire

/// Reads the script: bytes, integers and doubles of any bit pattern, zeros once it runs out.
struct Script {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    var isDone: Bool { offset >= bytes.count }

    mutating func byte() -> UInt8 {
        defer { offset += 1 }
        return offset < bytes.count ? bytes[offset] : 0
    }

    mutating func uint64() -> UInt64 { (0..<8).reduce(0) { value, _ in value << 8 | UInt64(byte()) } }
    mutating func int64() -> Int64 { Int64(bitPattern: uint64()) }
    mutating func uint32() -> UInt32 { UInt32(truncatingIfNeeded: uint64() >> 32) }

    /// A number as a peer may send it: small, huge, fractional, negative, or any bit pattern (infinities and NaN
    /// cannot come through JSON, but the bounds must refuse them all the same).
    mutating func number() -> Double {
        switch byte() % 6 {
        case 0: 0
        case 1: Double(byte())
        case 2: 1e-300
        case 3: -Double(byte())
        case 4: Double(int64())
        default: Double(bitPattern: uint64())
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSession(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var script = Script(bytes: UnsafeRawBufferPointer(start: data, count: size))
    var router = StreamRouter<Int>(
        sessionId: "fuzz", limits: .init(keyframeRequestsPerSubscriber: Int(script.byte() % 4) + 1, maximumStreamsPerSession: 32))
    var now = Double(script.byte())
    var connections: [String] = []
    var firstTimes: [UInt32: MediaTime] = [:]
    var steps = 0
    func connection(_ script: inout Script) -> String { connections.isEmpty ? "none" : connections[Int(script.byte()) % connections.count] }
    // The largest welcome of the run is encoded at its end (encoding each one was most of the run's time).
    var largestWelcome: (message: ControlMessage, roughSize: Int)?
    func check(_ actions: [StreamRouter<Int>.Action]) {
        for case .sendControl(let message, _) in actions {
            guard case .welcome(_, _, _, let streams, let connections, _) = message else { continue }
            let roughSize = streams.count * 256 + connections.reduce(0) { $0 + 64 + $1.data.utf8.count }
            if roughSize > largestWelcome?.roughSize ?? -1 { largestWelcome = (message, roughSize) }
        }
    }
    defer {
        if let largestWelcome, largestWelcome.message.encoded().utf8.count > ControlMessage.maximumSize {
            fatalError("a welcome over the control-message limit")
        }
    }
    // A session of up to 16 clients and 96 actions: enough to reach every state, small enough to run thousands a second.
    while !script.isDone, steps < 96 {
        steps += 1
        switch script.byte() % 12 {
        case 0:
            guard connections.count < 16 else { continue }
            let id = "c\(connections.count)"
            let role: Role = [.publisher, .subscriber, .moderator][Int(script.byte()) % 3]
            connections.append(id)
            check(router.connect(
                ConnectionInfo(connectionId: id, role: role, data: String(repeating: "\u{1}", count: Int(script.byte() % 16) * 4)),
                token: "t\(script.byte() % 4)", now: now))
        case 1, 2:
            // What ControlMessage.parse does with a publish or streamPropertyChanged: the bounds, then the session.
            let audio = script.byte() % 3 == 0
                ? AudioProperties(sampleRate: Int(truncatingIfNeeded: script.int64()), channels: Int(script.byte()) % 4, estimatedCaptureDelayMilliseconds: script.number())
                : nil
            let properties = StreamProperties(
                codec: .av1, width: Int(truncatingIfNeeded: script.int64()) % 20_000, height: Int(script.byte()) * 100,
                estimatedFramesPerSecond: script.number(), estimatedCaptureDelayMilliseconds: script.number(), audio: audio)
            guard let checked = try? properties.checkedBounds() else { continue }
            let message: ControlMessage = script.byte() % 2 == 0
                ? .publish(name: "s", properties: checked, acks: script.byte() % 2 == 0, discardableLayers: script.byte() % 2 == 0)
                : .streamPropertyChanged(streamId: UInt32(script.byte() % 4), properties: checked)
            check(router.handle(message, from: connection(&script), now: now))
        case 3, 4, 5:
            let flags = MediaFrameHeader.Flags(rawValue: script.byte() & 0b1101)
            let payload = Int(script.uint32() % (9 << 20))
            let header = MediaFrameHeader(
                streamID: UInt32(script.byte() % 4), sequence: script.uint64(), flags: flags, codec: .av1, width: Int(script.byte()),
                height: Int(script.byte()), captureTime: MediaTime(value: script.int64(), timescale: max(1, Int32(bitPattern: script.uint32()))),
                wallClockMilliseconds: script.int64(), metadata: .empty, payloadLength: 0)
            // Through the wire parser, as the relay reads it: what it refuses never reaches the session.
            guard let (parsed, _) = try? MediaFrameHeader.parse(header.encoded()) else { continue }
            let (admitted, actions) = router.receive(steps, header: parsed, size: payload, from: connection(&script), now: now)
            check(actions)
            if admitted {
                // The recorder's and the HLS packager's arithmetic on the admitted times.
                let first = firstTimes[parsed.streamID] ?? parsed.captureTime
                firstTimes[parsed.streamID] = first
                let elapsed = parsed.captureTime - first
                _ = elapsed.converted(to: 1000).value &+ 1
                _ = elapsed.converted(to: 90_000).value
                _ = Int64(saturating: elapsed.seconds * 48_000)
            }
        case 6:
            let header = AudioFrameHeader(
                streamID: UInt32(script.byte() % 4), sequence: script.uint64(), codec: .opus, channels: 1, samples: 960,
                captureTime: MediaTime(value: script.int64(), timescale: max(1, Int32(bitPattern: script.uint32()))),
                wallClockMilliseconds: 0, isSilence: false, payloadLength: 0)
            guard case .audio(let parsed, _)? = try? MediaMessage.parse(header.encoded()) else { continue }
            check(router.receiveAudio(steps, header: parsed, from: connection(&script), now: now).actions)
        case 7:
            // Subscribing (with or without catch-up: the cached group queued again) and unsubscribing, at any pace:
            // what was queued for a subscription goes when it ends, and the churn meets its allowance.
            let streamId = UInt32(script.byte() % 4)
            let message: ControlMessage = script.byte() % 3 == 0
                ? .unsubscribe(streamId: streamId)
                : .subscribe(streamId: streamId, audio: script.byte() % 2 == 0, layers: script.byte() % 2 == 0, catchUp: script.byte() % 2 == 0)
            check(router.handle(message, from: connection(&script), now: now))
        case 8:
            check(router.handle(.requestKeyframe(streamId: UInt32(script.byte() % 4)), from: connection(&script), now: now))
        case 9:
            let id = connection(&script)
            check(router.frameDelivered(to: id, streamId: UInt32(script.byte() % 4), now: now))
            router.audioFrameDelivered(to: id, streamId: UInt32(script.byte() % 4))
            let rate = Double(bitPattern: script.uint64())
            router.linkMeasured(id, deliveryBytesPerSecond: rate.isFinite ? abs(rate) : nil, pendingBytes: Int(script.uint32()), now: now)
        case 10:
            now += Double(script.byte()) / 16
            check(router.tick(now: now))
        default:
            let id = connection(&script)
            check(router.handle(.signal(Signal(type: "chat", data: String(repeating: "x", count: Int(script.byte())))), from: id, now: now))
            if script.byte() % 8 == 0 { check(router.disconnect(id)) }
        }
    }
    return 0
}
