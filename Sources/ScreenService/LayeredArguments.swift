public import ArgumentParser
import Foundation
import TOMLKit

/// A command's settings from three layers, later ones winning: a TOML file, `PREFIX_*` environment variables,
/// then the command line.
///
/// The file and the environment are turned into the command's own flags and put before the command line, so
/// that one parser and one `validate()` judge every value, whatever its origin, and the command line wins (for
/// a repeated option the last value counts). The file's keys are the long option names (`fps = 10`,
/// `data-dir = "/srv/relay"`; `_` may stand for `-`); an on/off flag pair `--x`/`--no-x` is the key `x` with
/// a boolean. The environment uses the same names upper-cased: `SCREENPUB_FPS=10`, `SCREENPUB_CURSOR=false`.
/// Only known names are read from the environment; unknown keys in the file are errors.
public struct LayeredArguments: Sendable {
    /// File and environment settings as flags, then the command line.
    public let arguments: [String]
    /// Where each option not given on the command line got its value: "FILE line N (key = value)", "$NAME".
    public let origins: [String: String]
    /// The file that was read, if any.
    public let configurationFile: String?

    /// Reads `file` (when given; a missing file is fine unless `required`) and the environment for `command`.
    public init(
        command: any ParsableArguments.Type, commandLine: [String], file: String?, fileRequired: Bool,
        environment: [String: String], environmentPrefix: String
    ) throws(ServiceError) {
        let options = OptionTable(command)
        var layered: [String] = []
        var origins: [String: String] = [:]
        if let file {
            let text: String
            if let contents = FileManager.default.contents(atPath: file) {
                text = String(decoding: contents, as: UTF8.self)
            } else if fileRequired || FileManager.default.fileExists(atPath: file) {
                throw ServiceError(.badConfiguration, "cannot read the configuration file \(file)")
            } else {
                text = ""
            }
            for setting in try Self.settings(inFile: file, text: text, options: options) {
                layered += setting.arguments
                origins[setting.option] = setting.origin
            }
            configurationFile = file
        } else {
            configurationFile = nil
        }
        for (name, value) in environment.sorted(by: { $0.key < $1.key }) where name.hasPrefix(environmentPrefix) {
            let key = name.dropFirst(environmentPrefix.count).lowercased().replacingOccurrences(of: "_", with: "-")
            guard let option = options.byKey[key] else { continue }
            let arguments: [String]
            switch option.kind {
            case .value:
                arguments = ["--\(key)", value]
            case .flag(let on, let off):
                guard let enabled = Self.boolean(value) else {
                    throw ServiceError(.badConfiguration, "$\(name) must be true or false (1/0, yes/no), got '\(value)'")
                }
                guard let flag = enabled ? on : off else { continue }
                arguments = ["--\(flag)"]
            }
            layered += arguments
            origins[key] = "$\(name)"
        }
        // Whatever the command line gives, it says last.
        for argument in commandLine where argument.hasPrefix("--") {
            let name = String(argument.dropFirst(2).prefix { $0 != "=" })
            origins[options.byFlag[name] ?? name] = nil
        }
        arguments = layered + commandLine
        self.origins = origins
    }

    /// Names where a bad value came from when `message` (a parse or validation error) is about an option that
    /// was set in the file or the environment; nil when it is about the command line.
    public func explain(_ message: String) -> String? {
        for match in message.matches(of: /--([a-z0-9][a-z0-9-]*)/) {
            let flag = String(match.output.1)
            let key = flag.hasPrefix("no-") && origins[flag] == nil ? String(flag.dropFirst(3)) : flag
            if let origin = origins[key] { return "\(origin): \(message)" }
        }
        return nil
    }

    /// The layers of `APPLICATION`: `--config FILE` from `commandLine` or the default file (which may be
    /// missing), and the `APPLICATION_*` variables of this process's environment.
    public static func read(
        command: any ParsableArguments.Type, application: String, commandLine: [String]
    ) throws(ServiceError) -> LayeredArguments {
        let environment = ProcessInfo.processInfo.environment
        let explicitFile = configOption(in: commandLine)
        return try LayeredArguments(
            command: command, commandLine: commandLine,
            file: explicitFile ?? defaultFile(application: application, environment: environment),
            fileRequired: explicitFile != nil, environment: environment,
            environmentPrefix: application.uppercased() + "_")
    }

    /// `Command` (the subcommand `name` of `root`) from the configuration file, the environment and
    /// `commandLine`, parsed from the top so that errors show `root name` in their usage line. Throws
    /// ``ServiceError`` (`.badConfiguration`, naming the file and line, or the variable) when a value from the file
    /// or the environment is wrong, and ArgumentParser's errors when the command line is.
    public static func parse<Command: ParsableCommand>(
        _ command: Command.Type, as name: String, of root: any ParsableCommand.Type, application: String, commandLine: [String]
    ) throws -> Command {
        let layers = try read(command: command, application: application, commandLine: commandLine)
        do {
            guard let parsed = try root.parseAsRoot([name] + layers.arguments) as? Command else {
                throw ValidationError("expected the \(name) command")
            }
            return parsed
        } catch {
            if let explained = layers.explain(root.message(for: error)) { throw ServiceError(.badConfiguration, explained) }
            throw error
        }
    }

    /// `--fps -3` as `--fps=-3`: ArgumentParser reads a value that starts with `-` as an option and then says the
    /// value is missing; a negative number after an option is meant as its value (and then gets a sentence about
    /// its range).
    public static func attachingNegativeNumbers(_ commandLine: [String]) -> [String] {
        var result: [String] = []
        var index = 0
        while index < commandLine.count {
            let argument = commandLine[index]
            if argument.hasPrefix("--"), argument.count > 2, !argument.contains("="), index + 1 < commandLine.count,
                commandLine[index + 1].count > 1, commandLine[index + 1].hasPrefix("-"), Double(commandLine[index + 1]) != nil
            {
                result.append(argument + "=" + commandLine[index + 1])
                index += 2
                continue
            }
            result.append(argument)
            index += 1
        }
        return result
    }

    /// The default file: `$XDG_CONFIG_HOME/APPLICATION/config.toml` (or `~/.config/…`).
    public static func defaultFile(application: String, environment: [String: String]) -> String {
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.config"
        return "\(base)/\(application)/config.toml"
    }

    /// The value of `--config PATH` / `--config=PATH` on a command line, if given.
    public static func configOption(in commandLine: [String]) -> String? {
        for (index, argument) in commandLine.enumerated() {
            if argument == "--config", index + 1 < commandLine.count { return commandLine[index + 1] }
            if argument.hasPrefix("--config=") { return String(argument.dropFirst("--config=".count)) }
        }
        return nil
    }

    // MARK: The file

    private struct Setting {
        var option: String
        var arguments: [String]
        var origin: String
    }

    private static func settings(inFile file: String, text: String, options: OptionTable) throws(ServiceError) -> [Setting] {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ServiceError(.badConfiguration, "\(file) line \(error.source.begin.line): \(error.description)")
        } catch {
            throw ServiceError(.badConfiguration, "\(file): \(error)")
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var settings: [Setting] = []
        for rawKey in table.keys {
            let line = Self.line(of: rawKey, in: lines)
            let place = "\(file) line \(line)"
            let key = rawKey.replacingOccurrences(of: "_", with: "-")
            guard let option = options.byKey[key], let value = table[rawKey]?.tomlValue else {
                let known = options.byKey.keys.sorted().joined(separator: ", ")
                throw ServiceError(.badConfiguration, "\(place): unknown key '\(rawKey)' (known keys: \(known))")
            }
            let written = "\(rawKey) = \(value.debugDescription)"
            switch (option.kind, value.type) {
            case (.value, .string):
                settings.append(Setting(option: key, arguments: ["--\(key)", value.string ?? ""], origin: "\(place) (\(written))"))
            case (.value, .int):
                settings.append(Setting(option: key, arguments: ["--\(key)", String(value.int ?? 0)], origin: "\(place) (\(written))"))
            case (.value, .double):
                settings.append(Setting(option: key, arguments: ["--\(key)", String(value.double ?? 0)], origin: "\(place) (\(written))"))
            case (.value, .array):
                // A repeatable option (`to = ["file:/a.webm", "http://relay:8090"]`): once per element.
                let elements = value.array.map { Array($0) } ?? []
                let strings = elements.compactMap(\.string)
                guard strings.count == elements.count else {
                    throw ServiceError(.badConfiguration, "\(place): '\(rawKey)' must be a list of strings, got \(value.debugDescription)")
                }
                settings.append(Setting(option: key, arguments: strings.flatMap { ["--\(key)", $0] }, origin: "\(place) (\(written))"))
            case (.flag(let on, let off), .bool):
                if let flag = (value.bool ?? false) ? on : off {
                    settings.append(Setting(option: key, arguments: ["--\(flag)"], origin: "\(place) (\(written))"))
                }
            case (.flag, _):
                throw ServiceError(.badConfiguration, "\(place): '\(rawKey)' must be true or false, got \(value.debugDescription)")
            case (.value, _):
                throw ServiceError(.badConfiguration, "\(place): '\(rawKey)' must be a string or a number, got \(value.debugDescription)")
            }
        }
        return settings.sorted { $0.origin < $1.origin }
    }

    /// The line on which a top-level key is set, for messages (1 when it cannot be told).
    private static func line(of key: String, in lines: [Substring]) -> Int {
        for (index, line) in lines.enumerated() {
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            for spelling in [key, "\"\(key)\"", "'\(key)'"] where trimmed.hasPrefix(spelling) {
                if trimmed.dropFirst(spelling.count).drop(while: { $0 == " " || $0 == "\t" }).first == "=" { return index + 1 }
            }
        }
        return 1
    }

    static func boolean(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "1", "true", "yes", "on": true
        case "0", "false", "no", "off": false
        default: nil
        }
    }
}


/// The command's long options, read from ArgumentParser's own description of it, so that the file accepts
/// exactly what the command line does.
private struct OptionTable {
    enum Kind {
        /// `--key VALUE`.
        case value
        /// `--on` for true, `--off` for false (either may be missing: a lone `--verbose` has no off).
        case flag(on: String?, off: String?)
    }
    struct Option {
        var kind: Kind
    }

    /// Option key (as in the file) → what it takes.
    var byKey: [String: Option] = [:]
    /// Any long flag spelling → its key (`no-cursor` → `cursor`).
    var byFlag: [String: String] = [:]

    /// Not settings: asking for help, versions, the file itself.
    static let excluded: Set<String> = ["help", "version", "config", "generate-completion-script", "experimental-dump-help"]

    init(_ command: any ParsableArguments.Type) {
        // `_dumpHelp()` is ArgumentParser's JSON description of the command (`--experimental-dump-help`).
        let json = Data(command._dumpHelp().utf8)
        guard let description = try? JSONDecoder().decode(DumpedHelp.self, from: json) else { return }
        for argument in description.command.arguments ?? [] {
            let longNames = (argument.names ?? []).filter { $0.kind == "long" }.map(\.name)
            guard !longNames.isEmpty, longNames.allSatisfy({ !Self.excluded.contains($0) }) else { continue }
            switch argument.kind {
            case "option":
                for name in longNames {
                    byKey[name] = Option(kind: .value)
                    byFlag[name] = name
                }
            case "flag":
                let positive = longNames.first { !$0.hasPrefix("no-") }
                let negative = longNames.first { $0.hasPrefix("no-") }
                // Every name here is long, so a flag without a positive name has a `no-` one.
                guard let key = positive ?? negative.map({ String($0.dropFirst(3)) }) else { continue }
                // An inverted flag may be described as two arguments (`--cursor`, `--no-cursor`): keep both names.
                if case .flag(let on, let off)? = byKey[key]?.kind {
                    byKey[key] = Option(kind: .flag(on: positive ?? on, off: negative ?? off))
                } else {
                    byKey[key] = Option(kind: .flag(on: positive, off: negative))
                }
                for name in longNames { byFlag[name] = key }
            default:
                continue
            }
        }
    }

    private struct DumpedHelp: Decodable {
        struct Command: Decodable { var arguments: [Argument]? }
        struct Argument: Decodable {
            var kind: String
            var names: [Name]?
        }
        struct Name: Decodable {
            var kind: String
            var name: String
        }
        var command: Command
    }
}
