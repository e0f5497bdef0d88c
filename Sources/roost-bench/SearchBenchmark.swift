import Foundation
import RoostArchive

/// Times the archive's search against the `LIKE` scans desktop clients use, on an archive built by
/// `SyntheticArchive.build` (its vocabulary is what the queries look for). For `roost-bench search`.
enum SearchBenchmark {
    struct Result: Sendable {
        var name: String
        var query: String
        var order: SearchOrder
        var rows: Int
        /// Median over the runs, milliseconds.
        var searchMs: Double
        var likeMs: Double
        var speedup: Double { searchMs > 0 ? likeMs / searchMs : 0 }
    }

    struct Case {
        let name: String
        let query: String
        let order: SearchOrder
        /// The LIKE equivalent: WHERE clause and its parameters (ordered by timestamp without an index,
        /// as a client scanning its history would).
        let likeWhere: String
        let likeParameters: [SQLValue]
    }

    static func cases(now: Date) -> [Case] {
        let monthAgo = Int64((now.timeIntervalSince1970 - 30 * 86_400) * 1000)
        return [
            Case(name: "newest-first common word", query: "the", order: .newestFirst,
                 likeWhere: "body LIKE ?", likeParameters: [.text("%the%")]),
            Case(name: "newest-first two words", query: "the you", order: .newestFirst,
                 likeWhere: "body LIKE ? AND body LIKE ?", likeParameters: [.text("%the%"), .text("%you%")]),
            Case(name: "ranked rare word", query: "zorblaxquin", order: .rank,
                 likeWhere: "body LIKE ?", likeParameters: [.text("%zorblaxquin%")]),
            Case(name: "ranked common word (worst case)", query: "the", order: .rank,
                 likeWhere: "body LIKE ?", likeParameters: [.text("%the%")]),
            Case(name: "phrase", query: "\"good morning\"", order: .newestFirst,
                 likeWhere: "body LIKE ?", likeParameters: [.text("%good morning%")]),
            Case(name: "Chinese word", query: "的一", order: .newestFirst,
                 likeWhere: "body LIKE ?", likeParameters: [.text("%的一%")]),
            Case(name: "prefix", query: "trav*", order: .newestFirst,
                 likeWhere: "body LIKE ?", likeParameters: [.text("%trav%")]),
            Case(name: "from: + date: + word", query: "from:contact1 date:30d.. the", order: .newestFirst,
                 likeWhere: "from_bare LIKE ? AND timestamp >= ? AND body LIKE ?",
                 likeParameters: [.text("contact1@%"), .integer(monthAgo), .text("%the%")]),
        ]
    }

    /// Runs every case `runs` times (median) on the archive at `path`.
    static func run(path: String, runs: Int = 5, now: Date = Date()) throws(ArchiveError) -> [Result] {
        let reader = try ArchiveReader(path: path)
        let database: Database
        do throws(SQLiteError) {
            database = try Database(path: path, mode: .readOnly)
        } catch {
            throw .sqlite(error)
        }
        var results: [Result] = []
        for benchmark in cases(now: now) {
            var searchTimes: [Double] = []
            var rows = 0
            for _ in 0..<max(1, runs) {
                let start = DispatchTime.now().uptimeNanoseconds
                rows = try reader.search(query: benchmark.query, order: benchmark.order, limit: 50, now: now).count
                searchTimes.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
            }
            var likeTimes: [Double] = []
            let sql = "SELECT \(MessageRowReading.columns) FROM messages m WHERE \(benchmark.likeWhere) ORDER BY m.timestamp DESC LIMIT 50"
            for _ in 0..<max(1, min(runs, 3)) {
                let start = DispatchTime.now().uptimeNanoseconds
                do throws(SQLiteError) {
                    try database.prepare(sql).forEachRow(benchmark.likeParameters) { _ in true }
                } catch {
                    throw .sqlite(error)
                }
                likeTimes.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
            }
            results.append(Result(name: benchmark.name, query: benchmark.query, order: benchmark.order, rows: rows,
                                  searchMs: median(searchTimes), likeMs: median(likeTimes)))
        }
        return results
    }

    /// A plain-text table of the results.
    static func format(_ results: [Result]) -> String {
        var lines = ["case                              query                          rows   search ms   LIKE ms   speed-up"]
        for result in results {
            func pad(_ text: String, _ width: Int) -> String {
                text.count >= width ? String(text.prefix(width)) : text + String(repeating: " ", count: width - text.count)
            }
            lines.append(pad(result.name, 34) + pad(result.query, 31) + pad(String(result.rows), 7)
                         + pad(String(format: "%9.3f", result.searchMs), 12) + pad(String(format: "%8.1f", result.likeMs), 10)
                         + String(format: "%8.0fx", result.speedup))
        }
        return lines.joined(separator: "\n")
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}
