import Foundation
import RoostArchive
import RoostSynthetic

/// `roost-bench search [--messages N] [--path FILE] [--keep]`: builds a synthetic archive (15% CJK) and
/// prints each query's time next to the same query as a LIKE scan, with the ratio.
enum SearchBench {
    static func run(_ arguments: [String]) throws {
        var messages = 1_000_000
        var path = NSTemporaryDirectory() + "roost-bench-search.sqlite"
        var reuse = false
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--messages": index += 1; messages = Int(arguments[index]) ?? messages
            case "--path": index += 1; path = arguments[index]
            case "--reuse": reuse = true
            default: throw BenchUsage(text: "unknown option \(arguments[index])")
            }
            index += 1
        }
        if !(reuse && FileManager.default.fileExists(atPath: path)) {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            print("building \(messages) synthetic messages (15% CJK) at \(path) ...")
            let report = try SyntheticArchive.build(at: path, messages: messages, cjkShare: 0.15)
            print("built: \(report)")
        }
        let results = try SearchBenchmark.run(path: path)
        print(SearchBenchmark.format(results))
    }
}

struct BenchUsage: Error, CustomStringConvertible {
    let text: String
    var description: String { text }
}
