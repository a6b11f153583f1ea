import Foundation

/// Gives memory that was freed back to the system (glibc's `malloc_trim`): after thousands of connections came and
/// went, malloc keeps what they freed on its lists and the relay's RSS stays at its peak. Looked up at run time
/// (it is not in Swift's Glibc module); where there is none, nothing happens.
enum MemoryTrim {
    private typealias Trim = @convention(c) (Int) -> Int32

    // A C function pointer (Sendable): immutable once looked up, safe to call from any thread.
    private static let trim: Trim? = dlsym(nil, "malloc_trim")  // nil: RTLD_DEFAULT, the process's own symbols
        .map { unsafeBitCast($0, to: Trim.self) }

    static func returnFreedMemory() { _ = trim?(0) }
}
