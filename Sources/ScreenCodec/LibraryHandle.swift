/// A C library's struct (a codec context, an image descriptor) in memory of its own, at a fixed address for as
/// long as the library may hold it, released with its owner: `release` runs first when it was marked open.
final class LibraryHandle<Value> {
    let pointer: UnsafeMutablePointer<Value>
    private let release: (UnsafeMutablePointer<Value>) -> Void
    private(set) var isOpen = false

    init(_ empty: Value, release: @escaping (UnsafeMutablePointer<Value>) -> Void = { _ in }) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: empty)
        self.release = release
    }

    /// Says that the library initialized the struct: it is released before it is freed or opened again.
    func markOpen() { isOpen = true }

    func close() {
        if isOpen { release(pointer) }
        isOpen = false
    }

    deinit {
        close()
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}

@available(*, unavailable, message: "the library's struct belongs to one thread")
extension LibraryHandle: Sendable {}

/// A codec library's error and its detail, as one text.
func libraryErrorText(_ message: UnsafePointer<CChar>?, _ detail: UnsafePointer<CChar>?) -> String {
    let text = message.map { String(cString: $0) } ?? "unknown error"
    return detail.map { "\(text) (\(String(cString: $0)))" } ?? text
}
