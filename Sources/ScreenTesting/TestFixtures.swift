import Foundation

/// Files in `Tests/Fixtures`: test doubles and independent readers run as programs by tests.
public enum TestFixtures {
    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Tests/Fixtures").standardized.path

    /// Prints the `emsg` boxes of fragmented MP4 files, their ID3 messages parsed by mutagen (one JSON line each).
    public static let emsgReader = directory + "/read-emsg-id3.py"
    /// How old the newest picture a `screensub --json` viewer held was, sampled over time (the benchmark's measure).
    public static let pictureAge = URL(fileURLWithPath: directory + "/../../Benchmarks/picture_age.py").standardized.path
}
