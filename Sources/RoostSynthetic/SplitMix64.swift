/// A small seeded generator so synthetic archives are reproducible.
package struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    package init(seed: UInt64) {
        state = seed
    }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Skewed towards small values, so a few words are very common and most are rare.
    package mutating func zipfIndex(_ count: Int) -> Int {
        let uniform = Double(next() >> 11) / Double(1 << 53)
        return min(count - 1, Int(uniform * uniform * uniform * Double(count)))
    }

    package mutating func below(_ bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }
}
