import Foundation

/// Writes `text` and a newline to standard output at once, also when it is a pipe: scripts read what a command
/// prints (a viewer link, each frame) while it runs, which `print`'s buffer would hold back.
@Sendable public func printNow(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}
