import Foundation

/// What a share is told of the process it runs in: its environment variables, its processor cores, and which file
/// descriptors it inherited. ``ShareConfiguration`` reads nothing of the process itself: the command hands it
/// ``current``, and tests make one up (a dictionary literal is an environment of those variables, one core and no
/// inherited descriptors).
public struct ShareEnvironment: Sendable, ExpressibleByDictionaryLiteral {
    public var variables: [String: String]
    /// Cores the encoder may use (its default thread count follows them).
    public var processorCount: Int
    /// Whether a file descriptor is open in the process (`--pipewire-remote` must name one).
    public var isOpenDescriptor: @Sendable (Int32) -> Bool

    public init(variables: [String: String], processorCount: Int = 1, isOpenDescriptor: @escaping @Sendable (Int32) -> Bool = { _ in false }) {
        self.variables = variables
        self.processorCount = processorCount
        self.isOpenDescriptor = isOpenDescriptor
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(variables: Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// This process's.
    public static var current: ShareEnvironment {
        ShareEnvironment(
            variables: ProcessInfo.processInfo.environment, processorCount: ProcessInfo.processInfo.activeProcessorCount,
            isOpenDescriptor: { fcntl($0, F_GETFD) >= 0 })
    }
}
