import ArgumentParser
import Foundation
import ScreenService
import Testing

/// The settings layers (file < environment < command line) of a made-up command, and the control socket's
/// round trip, without any share.
struct LayeredArgumentsTests {
    struct Tool: ParsableCommand {
        @Option var fps = 5.0
        @Option var server: String?
        @Flag(inversion: .prefixedNo) var cursor = true
        @Option var mask: [String] = []
    }

    static func file(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("layers-\(UUID().uuidString).toml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func parse(_ commandLine: [String], file: String?, environment: [String: String]) throws -> (Tool, LayeredArguments) {
        let layers = try LayeredArguments(
            command: Tool.self, commandLine: commandLine, file: file, fileRequired: false, environment: environment,
            environmentPrefix: "TOOL_")
        return (try Tool.parse(layers.arguments), layers)
    }

    @Test func theCommandLineWinsOverTheEnvironmentWhichWinsOverTheFile() throws {
        let file = try Self.file("fps = 2\nserver = \"http://file\"\ncursor = false\nmask = [\"a*\", \"b*\"]\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let (fromFile, layers) = try Self.parse([], file: file, environment: [:])
        #expect(fromFile.fps == 2 && fromFile.server == "http://file" && !fromFile.cursor && fromFile.mask == ["a*", "b*"])
        #expect(layers.origins["fps"]?.contains("line 1") == true)
        let (fromEnvironment, _) = try Self.parse([], file: file, environment: ["TOOL_FPS": "3", "TOOL_CURSOR": "yes", "OTHER_FPS": "9"])
        let (_, environmentLayers) = try Self.parse([], file: file, environment: ["TOOL_FPS": "3", "TOOL_CURSOR": "yes", "OTHER_FPS": "9"])
        #expect(fromEnvironment.fps == 3 && fromEnvironment.cursor, "\(environmentLayers.arguments)")
        let (fromCommandLine, commandLineLayers) = try Self.parse(["--fps", "4"], file: file, environment: ["TOOL_FPS": "3"])
        #expect(fromCommandLine.fps == 4 && commandLineLayers.origins["fps"] == nil)
    }

    @Test func badValuesNameWhereTheyCameFrom() throws {
        let file = try Self.file("fps = 2\nspeed = 9\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(throws: ServiceError.self) { try Self.parse([], file: file, environment: [:]) }
        #expect(throws: ServiceError.self) { try Self.parse([], file: nil, environment: ["TOOL_CURSOR": "perhaps"]) }
        let required = FileManager.default.temporaryDirectory.appendingPathComponent("missing-\(UUID().uuidString).toml").path
        #expect(throws: ServiceError.self) {
            try LayeredArguments(
                command: Tool.self, commandLine: [], file: required, fileRequired: true, environment: [:], environmentPrefix: "TOOL_")
        }
    }

    @Test func aNegativeNumberAfterAnOptionIsItsValue() {
        #expect(LayeredArguments.attachingNegativeNumbers(["--fps", "-3", "--no-cursor"]) == ["--fps=-3", "--no-cursor"])
    }
}

@Suite(.timeLimit(.minutes(1))) struct ControlSocketTests {
    @Test func aCommandGetsItsAnswerAndTheSocketGoesWhenTheServerStops() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("control-\(UUID().uuidString.prefix(8)).sock").path
        let server = try ControlServer(path: path, logger: .init(label: "test")) { command in
            ControlServer.Reply(json: Data("{\"said\":\"\(command)\"}".utf8))
        }
        let running = Task { try await server.run() }
        var answer: Data?
        for _ in 0..<50 where answer == nil {
            answer = try? await ControlSocket.send("status", to: path)
            if answer == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(answer.map { String(decoding: $0, as: UTF8.self) }?.contains("\"said\":\"status\"") == true)
        #expect(throws: (any Error).self) { try ControlServer(path: path, logger: .init(label: "test")) { _ in .init(json: Data()) } }
        running.cancel()
        #expect(await ControlSocket.waitUntilGone(path, timeout: .seconds(5)))
    }
}
