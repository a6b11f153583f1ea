import Foundation
import ScreenTesting
import Testing

/// The README's table of tested desktops ("Tested desktops"), which each desktop's tests check their own row of
/// against what they found: the versions installed, the grant restored, the first picture, the window source.
enum TestedDesktopsTable {
    struct Missing: Error, CustomStringConvertible {
        let description: String
    }

    /// The row whose first cell is `desktop`, in the table whose first heading is `firstHeading` (the tested
    /// desktops, or the tested browsers): its cells by column heading.
    static func row(_ desktop: String, firstHeading: String = "Desktop") throws -> [String: String] {
        let text = try String(contentsOfFile: ReadmeExamples.readme, encoding: .utf8)
        let lines = text.split(separator: "\n").map(String.init)
        guard let header = lines.firstIndex(where: { $0.hasPrefix("| \(firstHeading) | Tested with") }) else {
            throw Missing(description: "the README has no table of tested \(firstHeading.lowercased())s")
        }
        let headings = cells(lines[header])
        guard let line = lines[(header + 2)...].prefix(while: { $0.hasPrefix("|") }).first(where: { cells($0).first == desktop }) else {
            throw Missing(description: "the README's table of tested \(firstHeading.lowercased())s has no row \(desktop)")
        }
        return Dictionary(zip(headings, cells(line)), uniquingKeysWith: { first, _ in first })
    }

    private static func cells(_ line: String) -> [String] {
        line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
            .map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// The upstream version of an installed Debian package: "5.27.5" for "4:5.27.5-3".
    static func installedVersion(_ package: String) async throws -> String {
        let query = try await ChildProcess.run("/usr/bin/dpkg-query", ["-W", "-f", "${Version}", package])
        var version = Substring(query.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))
        if let colon = version.firstIndex(of: ":") { version = version[version.index(after: colon)...] }
        if let dash = version.lastIndex(of: "-") { version = version[..<dash] }
        return String(version)
    }

    /// Checks that `desktop`'s row names the installed versions of `packages` (as "name version") and has the
    /// cells that begin as `found` says (column heading → the start of the cell).
    static func expectRow(_ desktop: String, packages: [(name: String, package: String)], found: [String: String]) async throws {
        let row = try row(desktop)
        let tested = row["Tested with (Debian 12)"] ?? ""
        for (name, package) in packages {
            let version = try await installedVersion(package)
            #expect(tested.contains("\(name) \(version)"), "the README's \(desktop) row says \"\(tested)\"; installed: \(name) \(version)")
        }
        for (column, start) in found {
            #expect(row[column]?.hasPrefix(start) == true, "the README's \(desktop) row, \(column): \"\(row[column] ?? "none")\"; the tests found: \(start)…")
        }
    }
}
