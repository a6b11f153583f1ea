import Foundation
import ScreenTesting
import Testing

/// The README's table of tested browsers ("Tested browsers") names the versions installed here, which
/// Tests/ScreenRelayTests/BrowserEnginesTests tests the viewer pages in.
@Suite struct TestedBrowsersTableTests {
    @Test(arguments: BrowserEngine.allCases)
    func theREADMENamesTheInstalledVersion(engine: BrowserEngine) async throws {
        if let missing = engine.missing { try Test.cancel(Comment(rawValue: missing)) }
        let row = try TestedDesktopsTable.row(engine.description, firstHeading: "Browser")
        let tested = row["Tested with (Debian 12)"] ?? ""
        // The engine's own package (for WebKitGTK its library, not the driver).
        let package = engine.packages[0]
        let version = try await TestedDesktopsTable.installedVersion(package)
        #expect(tested.contains("\(package) \(version)"), "the README's \(engine) row says \"\(tested)\"; installed: \(package) \(version)")
    }
}
