#if canImport(Glibc)
import Glibc
#endif
import Hummingbird
import NIOCore
import Synchronization

/// Tells a waiting request that its client went away. Hummingbird 2 neither cancels a handler's task when its
/// client disconnects (its connection's task is cancelled only when the server shuts down) nor closes the channel
/// when the client closes its socket: the relay's connections allow half-closure, so the client's FIN is only a
/// `ChannelEvent.inputClosed` in the pipeline, and the channel's `closeFuture` fires only on a reset or once the
/// answer is written. This handler, first in the pipeline, sees both that event and the channel's end; and since
/// the FIN may have come before it was added, the socket's own TCP state is read once it is in place. As Go's
/// net/http and nginx do, a client that closes its sending side while its request waits is taken as gone.
final class ClientGoneWatch: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    private let gone: @Sendable () -> Void
    private var fired = false

    init(_ gone: @escaping @Sendable () -> Void) { self.gone = gone }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { fire() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fire()
        context.fireChannelInactive()
    }

    private func fire() {
        guard !fired else { return }
        fired = true
        gone()
    }

    /// Whether the peer of `channel` has closed or reset its side, as the kernel knows it now (whether or not the
    /// channel has read it yet): not ESTABLISHED. Unknown (false) where TCP_INFO is not there.
    static func peerClosed(_ channel: any Channel) -> EventLoopFuture<Bool> {
        #if os(Linux)
        if let socket = channel as? any SocketOptionProvider {
            // TCP_ESTABLISHED is 1 in linux/tcp_states.h; a FIN received makes it CLOSE_WAIT, a reset CLOSE.
            return socket.getTCPInfo().map { $0.tcpi_state != 1 }.recover { _ in true }
        }
        #endif
        return channel.eventLoop.makeSucceededFuture(!channel.isActive)
    }
}

private let watchNames = Atomic<UInt64>(0)

extension ClientGoneWatch {
    /// Runs `operation` (a wait that takes one of the session's places) in a task of its own, cancelled as soon
    /// as the client of `channel` goes away (closes or resets its connection, or shuts its sending side), or when
    /// this task is cancelled; its result either way.
    static func whileConnected<T: Sendable>(_ channel: any Channel, _ operation: @escaping @Sendable () async -> T) async -> T {
        let task = Task { await operation() }
        let name = "client-gone-\(watchNames.add(1, ordering: .relaxed).newValue)"
        let cancel: @Sendable () -> Void = { task.cancel() }
        let installed = channel.eventLoop.flatSubmit { () -> EventLoopFuture<Bool> in
            do {
                try channel.pipeline.syncOperations.addHandler(ClientGoneWatch(cancel), name: name, position: .first)
            } catch {
                return channel.eventLoop.makeSucceededFuture(true)  // the channel is closed already
            }
            // Added first, read second: a FIN before the handler is in the kernel's state, one after reaches it.
            return ClientGoneWatch.peerClosed(channel)
        }
        do {
            if try await installed.get() { task.cancel() }
        } catch {
            task.cancel()
        }
        let result = await withTaskCancellationHandler { await task.value } onCancel: { task.cancel() }
        channel.pipeline.removeHandler(name: name, promise: nil)
        return result
    }
}
