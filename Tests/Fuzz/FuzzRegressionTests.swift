import Foundation
import Testing

/// Every fuzz target's property over its seed corpus and its regressions (inputs that once failed it), in the
/// ordinary test run: `Tests/Fuzz/corpus/TARGET/` and `Tests/Fuzz/regressions/TARGET/` (see docs/fuzzing.md).
/// A crash found by `contrib/scripts/fuzz` is saved into `regressions/` and then fails here until it is fixed.
@Suite("Fuzz targets: seeds and regressions")
struct FuzzRegressionTests {
    /// The targets, by the folder names of `contrib/scripts/fuzz`.
    static let targets: [(name: String, check: @Sendable (UnsafeBufferPointer<UInt8>) -> String?)] = [
        ("date", DateFuzz.check), ("xml", XMLFuzz.check), ("sasl", SCRAMFuzz.check), ("query", QueryFuzz.check),
        ("jsonl", JSONLinesFuzz.check), ("config", ConfigFuzz.check),
    ]

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().path

    static func inputs(_ target: String) throws -> [(String, [UInt8])] {
        var found: [(String, [UInt8])] = []
        for kind in ["corpus", "regressions"] {
            let folder = "\(root)/\(kind)/\(target)"
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            for name in names.sorted() where !name.hasPrefix(".") {
                found.append(("\(kind)/\(target)/\(name)", Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))))
            }
        }
        return found
    }

    @Test(arguments: FuzzRegressionTests.targets.map(\.name))
    func propertyHoldsForEverySavedInput(_ target: String) throws {
        let check = try #require(Self.targets.first { $0.name == target }?.check)
        let inputs = try Self.inputs(target)
        // A target without seeds would fuzz from nothing and prove nothing here.
        #expect(inputs.count >= 3, "\(target) has \(inputs.count) saved inputs")
        for (name, bytes) in inputs {
            let failure = bytes.withUnsafeBufferPointer { check($0) }
            #expect(failure == nil, "\(name): \(failure ?? "")")
        }
    }
}
