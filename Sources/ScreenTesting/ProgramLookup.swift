import Foundation

/// Finds the programs the tests drive (browsers, their drivers): an environment variable names one explicitly,
/// else the first of the usual names on the PATH.
enum ProgramLookup {
    static func find(_ names: [String], overriddenBy variable: String) -> String? {
        let environment = ProcessInfo.processInfo.environment
        if let configured = environment[variable], !configured.isEmpty { return configured }
        for name in names {
            for directory in (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
                return "\(directory)/\(name)"
            }
        }
        return nil
    }
}
