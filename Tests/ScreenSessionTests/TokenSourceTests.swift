import Foundation
import ScreenSession
import Testing

/// Where screensub takes its token: a file or the environment before the command line, one way only.
@Suite struct TokenSourceTests {
    func file(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("token-\(UUID().uuidString)").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func readsTheFirstLineOfAFileOrTheEnvironment() throws {
        let path = try file("  eyJabc.def  \nanything after\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try TokenSource.resolve(option: nil, file: path, environment: [:], variable: "SCREENSUB_TOKEN") == "eyJabc.def")
        #expect(try TokenSource.resolve(option: nil, file: nil, environment: ["SCREENSUB_TOKEN": "eyJenv\n"], variable: "SCREENSUB_TOKEN") == "eyJenv")
        #expect(try TokenSource.resolve(option: "eyJopt", file: nil, environment: [:], variable: "SCREENSUB_TOKEN") == "eyJopt")
        #expect(try TokenSource.resolve(option: nil, file: nil, environment: ["SCREENSUB_TOKEN": ""], variable: "SCREENSUB_TOKEN") == nil)
    }

    @Test func refusesTwoSourcesAMissingFileAndAnEmptyOne() throws {
        let empty = try file("\n")
        defer { try? FileManager.default.removeItem(atPath: empty) }
        func reason(_ option: String?, _ file: String?, _ environment: [String: String]) -> String? {
            do {
                _ = try TokenSource.resolve(option: option, file: file, environment: environment, variable: "SCREENSUB_TOKEN")
                return nil
            } catch {
                return error.description
            }
        }
        #expect(reason("a", nil, ["SCREENSUB_TOKEN": "b"])?.contains("one way only") == true)
        #expect(reason(nil, "/nonexistent/token", [:])?.contains("cannot read the token file") == true)
        #expect(reason(nil, empty, [:])?.contains("is empty") == true)
    }
}
