import Foundation

/// The random tests' generator: SplitMix64 from a seed, so that a run can be replayed. The seed is the one in
/// `SCREENPUB_TEST_SEED` when it is set, else a new one each run (each run tries other inputs). A test names it
/// in each failure's message (`#expect(…, "\(generator)")`), which says how to run it again with the same inputs.
public struct SeededRandomNumberGenerator: RandomNumberGenerator, CustomStringConvertible, Sendable {
    public static let environmentVariable = "SCREENPUB_TEST_SEED"

    public let seed: UInt64
    private var state: UInt64

    public init(seed: UInt64) {
        self.seed = seed
        state = seed
    }

    /// The seed in ``environmentVariable`` when it is set, else a new one.
    public init() {
        guard let given = ProcessInfo.processInfo.environment[Self.environmentVariable] else {
            self.init(seed: UInt64.random(in: .min ... .max))
            return
        }
        // A seed that does not parse must not quietly become another one: the run would not be the one asked for.
        guard let seed = UInt64(given.trimmingCharacters(in: .whitespaces)) else {
            preconditionFailure("\(Self.environmentVariable)=\(given) is not a seed (an unsigned 64-bit number)")
        }
        self.init(seed: seed)
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    public var description: String { "seed \(seed) (run again with \(Self.environmentVariable)=\(seed))" }
}
