// libFuzzer target for the relay's wire parsers: every input is tried as a binary media frame (video, and
// audio through MediaMessage) and as a text
// control message. Neither may trap; what parses must encode to something that parses to the same value
// (a parser and an encoder that disagree are a bug even without a crash). Built by Benchmarks/fuzz.sh.
import ScreenMedia
import ScreenWire

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWireParsers(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    if let (header, payload) = try? MediaFrameHeader.parse(bytes) {
        let again = header.encoded() + Array(bytes[payload])
        guard let (reparsed, _) = try? MediaFrameHeader.parse(again), reparsed == header else {
            fatalError("a media header that parses does not survive encoding: \(header)")
        }
    }
    if case .audio(let header, let payload)? = try? MediaMessage.parse(bytes) {
        let again = header.encoded() + Array(bytes[payload])
        guard case .audio(let reparsed, _)? = try? MediaMessage.parse(again), reparsed == header else {
            fatalError("an audio header that parses does not survive encoding: \(header)")
        }
    }
    let text = String(decoding: bytes, as: UTF8.self)
    if let message = try? ControlMessage.parse(text) {
        let encoded = message.encoded()
        guard let reparsed = try? ControlMessage.parse(encoded), reparsed == message else {
            fatalError("a control message that parses does not survive encoding: \(encoded)")
        }
    }
    // Whatever a client sends, the escaped form for logs is one line of printable text.
    let printable = text.escapingControlCharacters
    if printable.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
        fatalError("escapingControlCharacters left a control character in \(printable)")
    }
    return 0
}
