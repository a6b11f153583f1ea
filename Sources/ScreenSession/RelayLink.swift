import Logging
import NIOCore
import ScreenMedia
public import ScreenWire
import ScreenTransport
import ScreenTransportClient

/// The sending side of a relay connection, in protocol terms.
public struct RelayLink: Sendable {
    let outbound: RelayOutbound

    /// The TCP socket below, when there is one.
    var socket: LinkControl? { outbound.socket }

    public func send(_ message: ControlMessage) async throws {
        try await outbound.send(.text(message.encoded()))
    }

    /// Sends one media frame: header and metadata from `header`, then `payload`.
    public func send(_ header: MediaFrameHeader, payload: some Collection<UInt8>) async throws {
        try await sendBinary(headerSize: header.encodedSize, header.encode(into:), payload: payload)
    }

    /// Sends raw bytes as a binary message (for tests of malformed input).
    public func sendRaw(_ bytes: [UInt8]) async throws {
        try await outbound.send(.binary(ByteBuffer(bytes: bytes)))
    }

    public func sendRawText(_ text: String) async throws {
        try await outbound.send(.text(text))
    }

    /// Sends one audio frame.
    public func send(_ header: AudioFrameHeader, payload: some Collection<UInt8>) async throws {
        try await sendBinary(headerSize: header.encodedSize, header.encode(into:), payload: payload)
    }

    /// One binary message: a header written by `encodeHeader`, then the payload.
    private func sendBinary(
        headerSize: Int, _ encodeHeader: (UnsafeMutableRawBufferPointer) -> Int, payload: some Collection<UInt8>
    ) async throws {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(headerSize + payload.count)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: headerSize, encodeHeader)
        buffer.writeBytes(payload)
        try await outbound.send(.binary(buffer))
    }

    /// Closes the connection normally; the events then end.
    public func close() async throws {
        try await outbound.close()
    }
}
