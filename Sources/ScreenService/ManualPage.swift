public import Foundation

/// A man page (man(7) roff, UTF-8) made from what a command says about itself (`--experimental-dump-help`):
/// its abstract and discussion, every option with its default, one section per subcommand, the examples its
/// discussions give (lines under "Examples:"), and where the rest of the documentation is installed.
///
/// Unlike ArgumentParser's generate-manual, text stays UTF-8 (an en dash, ±, ×), an inverted flag is one entry
/// (`--cursor, --no-cursor`), and there is no `help` subcommand nor a `subcommand` placeholder in the synopsis.
public struct ManualPage {
    /// One command as the dump describes it (the fields used here; others are ignored).
    struct Command: Decodable {
        var commandName: String
        var abstract: String?
        var discussion: String?
        var arguments: [Argument]?
        var subcommands: [Command]?
        var defaultSubcommand: String?
        var shouldDisplay: Bool?
    }

    struct Argument: Decodable {
        struct Name: Decodable {
            var kind: String
            var name: String
        }
        var kind: String
        var names: [Name]?
        var valueName: String?
        var abstract: String?
        var discussion: String?
        var defaultValue: String?
        var isOptional: Bool?
        var isRepeating: Bool?
        var shouldDisplay: Bool?
    }

    private struct Dump: Decodable { var command: Command }

    let root: Command
    let date: String
    let version: String
    /// Where the package installs the README and docs/.
    let documentation: String

    /// Reads a `--experimental-dump-help` answer; throws when it is not one.
    public init(dump: Data, date: String, version: String, documentation: String = "/usr/share/doc/screenpub") throws {
        root = try JSONDecoder().decode(Dump.self, from: dump).command
        self.date = date
        self.version = version
        self.documentation = documentation
    }

    /// The page, starting with the line that tells man(1) it is UTF-8.
    public func render() -> String {
        let name = root.commandName
        var page = [#"'\" -*- coding: UTF-8 -*-"#, ".TH \(name.uppercased()) 1 \"\(date)\" \"screenpub \(version)\" \"User Commands\""]
        page += [".SH NAME", "\(escape(name)) \\- \(escape(sentence(root.abstract ?? "")))"]
        let visible = (root.subcommands ?? []).filter { $0.commandName != "help" && $0.shouldDisplay != false }
        let primary = visible.first { $0.commandName == root.defaultSubcommand }
        page.append(".SH SYNOPSIS")
        page += synopsis(root, path: [name], isRoot: true, primary: primary)
        var examples: [String] = []
        page.append(".SH DESCRIPTION")
        page += paragraphs(root.discussion ?? root.abstract ?? "", examples: &examples)
        if let primary {
            page += paragraphs(primary.discussion ?? "", examples: &examples)
        }
        let options = visibleArguments(primary ?? root) + (primary == nil ? [] : visibleArguments(root))
        if !options.isEmpty {
            page.append(".SH OPTIONS")
            page += describe(options)
        }
        let others = visible.filter { $0.commandName != primary?.commandName }
        if !others.isEmpty {
            page.append(".SH COMMANDS")
            for command in others { page += section(command, path: [name], examples: &examples) }
        }
        if !examples.isEmpty {
            page += [".SH EXAMPLES", ".nf"] + examples.map { escape($0.trimmingCharacters(in: .whitespaces)) } + [".fi"]
        }
        page += [
            ".SH SEE ALSO",
            [name == "screenpub" ? nil : "screenpub(1)", name == "screenrelay" ? nil : "screenrelay(1)", name == "screensub" ? nil : "screensub(1)"]
                .compactMap { $0 }.map { "\\fB\($0.replacingOccurrences(of: "(1)", with: ""))\\fR(1)" }.joined(separator: ", "),
            ".PP",
            escape("The README, the wire protocol, the architecture, performance figures and operations: \(documentation)/README.md.gz and \(documentation)/docs/ (read them with zless).")
                + " " + escape("Example configurations: \(documentation)/examples/."),
        ]
        return page.joined(separator: "\n") + "\n"
    }

    // MARK: Sections

    private func section(_ command: Command, path: [String], examples: inout [String]) -> [String] {
        let full = path + [command.commandName]
        var lines = [".SS \"\(escape(full.joined(separator: " ")))\""]
        lines += synopsis(command, path: path, isRoot: false, primary: nil)
        lines += paragraphs(command.abstract ?? "", examples: &examples)
        lines += paragraphs(command.discussion ?? "", examples: &examples)
        let arguments = visibleArguments(command)
        if !arguments.isEmpty { lines += describe(arguments) }
        for sub in (command.subcommands ?? []) where sub.commandName != "help" && sub.shouldDisplay != false {
            lines += section(sub, path: full, examples: &examples)
        }
        return lines
    }

    /// `.B name` lines: the default command's form first, then one per other command.
    private func synopsis(_ command: Command, path: [String], isRoot: Bool, primary: Command?) -> [String] {
        let words = isRoot ? path : path + [command.commandName]
        let target = primary ?? command
        var usage = [".PP", ".B \(escape(words.joined(separator: " ")))"]
        let positionals = visibleArguments(target).filter { $0.kind == "positional" }
        let hasOptions = visibleArguments(target).contains { $0.kind != "positional" }
        var rest: [String] = []
        if hasOptions { rest.append("[\\fIoptions\\fR]") }
        for positional in positionals {
            let value = "\\fI\(escape(positional.valueName ?? "value"))\\fR"
            rest.append(positional.isOptional == true ? "[\(value)]" : value)
        }
        let others = (command.subcommands ?? []).filter { $0.commandName != "help" && $0.shouldDisplay != false && $0.commandName != primary?.commandName }
        let choice = "{\(others.map { "\\fB\(escape($0.commandName))\\fR" }.joined(separator: "|"))} …"
        if !others.isEmpty, primary == nil { rest = [choice] }
        if !rest.isEmpty { usage.append(rest.joined(separator: " ")) }
        if !others.isEmpty, primary != nil { usage += [".br", ".B \(escape(words.joined(separator: " ")))", choice] }
        return usage
    }

    private func visibleArguments(_ command: Command) -> [Argument] {
        (command.arguments ?? []).filter { argument in
            guard argument.shouldDisplay != false else { return false }
            let long = argument.names?.first { $0.kind == "long" }?.name
            return !["help", "version", "help-hidden", "experimental-dump-help"].contains(long ?? "")
        }
    }

    /// `.TP` entries; an inverted flag (`--x` then `--no-x`) is one entry naming both.
    private func describe(_ arguments: [Argument]) -> [String] {
        var lines: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            var names = label(argument)
            if argument.kind == "flag", index + 1 < arguments.count, let long = argument.names?.first(where: { $0.kind == "long" })?.name,
                arguments[index + 1].names?.contains(where: { $0.kind == "long" && ($0.name == "no-\(long)" || $0.name == "disable-\(long)") })
                    == true
            {
                names += ", " + label(arguments[index + 1])
                index += 1
            }
            var text = sentence(argument.abstract ?? "")
            if let value = argument.defaultValue, !value.isEmpty { text += " (default: \(value))" }
            if argument.isRepeating == true, argument.kind != "flag" { text += " Repeatable." }
            lines += [".TP", names, escape(text)]
            if let discussion = argument.discussion, !discussion.isEmpty { lines += [".IP", escape(discussion)] }
            index += 1
        }
        return lines
    }

    private func label(_ argument: Argument) -> String {
        if argument.kind == "positional" { return "\\fI\(escape(argument.valueName ?? "value"))\\fR" }
        let names = (argument.names ?? []).sorted { $0.kind == "short" && $1.kind != "short" }.map { name in
            "\\fB" + escape(name.kind == "short" ? "-\(name.name)" : "--\(name.name)").replacingOccurrences(of: "-", with: "\\-") + "\\fR"
        }.joined(separator: ", ")
        guard argument.kind == "option" else { return names }
        return names + " \\fI\(escape(argument.valueName ?? "value"))\\fR"
    }

    /// Paragraphs of a discussion: blank lines separate them, indented lines are kept as they are, and the
    /// lines under an "Example:"/"Examples:" line go to the EXAMPLES section.
    private func paragraphs(_ text: String, examples: inout [String]) -> [String] {
        var lines: [String] = []
        var inExamples = false
        var preformatted = false
        for line in text.components(separatedBy: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed == "Examples:" || trimmed == "Example:" {
                inExamples = true
                continue
            }
            if inExamples {
                if line.hasPrefix(" "), !trimmed.isEmpty {
                    examples.append(trimmed)
                    continue
                }
                inExamples = false
                if !examples.isEmpty, examples.last != "" { examples.append("") }
            }
            if trimmed.isEmpty {
                if preformatted { lines.append(".fi"); preformatted = false }
                if !(lines.last == ".PP") { lines.append(".PP") }
            } else if line.hasPrefix("  ") {
                if !preformatted { lines.append(".nf"); preformatted = true }
                lines.append(escape(line))
            } else {
                if preformatted { lines.append(".fi"); preformatted = false }
                lines.append(escape(line))
            }
        }
        if preformatted { lines.append(".fi") }
        if inExamples, !examples.isEmpty, examples.last != "" { examples.append("") }
        while lines.last == ".PP" { lines.removeLast() }
        if lines.first != ".PP" { lines.insert(".PP", at: 0) }
        return lines
    }

    private func sentence(_ text: String) -> String {
        text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Text safe in roff: backslashes escaped, and a line that starts with `.` or `'` (a request) guarded.
    func escape(_ text: String) -> String {
        var escaped = text.replacingOccurrences(of: "\\", with: "\\e")
        if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = "\\&" + escaped }
        return escaped.replacingOccurrences(of: "\n.", with: "\n\\&.").replacingOccurrences(of: "\n'", with: "\n\\&'")
    }
}
