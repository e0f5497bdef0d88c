import Foundation
import RoostArchive
import RoostSynthetic

/// `roost-bench serve [--messages N] [--small N] [--folder DIR] [--reuse] [--repeat N]`: the pages of the web
/// view (`roost serve`) at a small and a large synthetic archive — conversation list, newest page of the
/// largest conversation, three pages back, a page near its oldest message, open in context, search for a
/// Latin and a Chinese word, an idle live check — as median and worst milliseconds of `--repeat` runs, and
/// the large/small ratio of each (flat ratios are what keyset pagination promises). Figures, never
/// assertions. Build in release first: `swift build -c release --product roost-bench`.
enum ServeBench {
    struct Links: BrowseLinks {
        func conversation(accountID: Int64, jid: String, at messageID: Int64?) -> String { "/c" }
        func attachment(messageID: Int64, index: Int) -> String { "/file" }
        func avatar(accountID: Int64, jid: String) -> String { "/avatar" }
        func preview(messageID: Int64, index: Int) -> String? { "/preview" }
    }

    static func run(_ arguments: [String]) throws {
        var large = 1_000_000
        var small = 10_000
        var repeats = 15
        var folder = NSTemporaryDirectory() + "roost-bench-serve"
        var reuse = false
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--messages": index += 1; large = Int(arguments[index]) ?? large
            case "--small": index += 1; small = Int(arguments[index]) ?? small
            case "--repeat": index += 1; repeats = max(1, Int(arguments[index]) ?? repeats)
            case "--folder": index += 1; folder = arguments[index]
            case "--reuse": reuse = true
            default: throw BenchUsage(text: "unknown option \(arguments[index]); options: --messages N --small N --repeat N --folder DIR --reuse")
            }
            index += 1
        }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        print("roost-bench serve: \(small) and \(large) synthetic messages in \(folder), \(repeats) runs each")
        var results: [[(String, [Double])]] = []
        for count in [small, large] {
            let archive = "\(folder)/archive-\(count).sqlite"
            if !(reuse && FileManager.default.fileExists(atPath: archive)) {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: archive + suffix) }
                print("building \(count) messages ...")
                let report = try SyntheticArchive.build(at: archive, messages: count)
                print(String(format: "  built in %.1f s (%.0f messages/s)", report.seconds, report.messagesPerSecond))
            }
            results.append(try measure(archive: archive, repeats: repeats))
        }
        print("")
        print("page                               \(pad("\(small) msgs", 16))\(pad("\(large) msgs", 16))large/small")
        for (row, (name, smallTimes)) in results[0].enumerated() {
            let largeTimes = results[1][row].1
            let ratio = median(largeTimes) / max(median(smallTimes), 0.001)
            print(pad(name, 35) + pad(cell(smallTimes), 16) + pad(cell(largeTimes), 16) + String(format: "%.2f", ratio))
        }
        print("(median / worst milliseconds of one page, read and drawn; HTTP adds a copy of the page)")
    }

    private static func measure(archive: String, repeats: Int) throws -> [(String, [Double])] {
        let browser = ArchiveBrowser(reader: try ArchiveReader(path: archive), links: Links(), timeZone: TimeZone(identifier: "UTC")!)
        let accountID = try browser.accounts().first { $0.value == SyntheticArchive.accounts[0] }?.key ?? 1
        let jid = SyntheticArchive.contact(0)
        let newest = try browser.transcript(accountID: accountID, jid: jid, position: .newest, states: true, presence: true)
        var cursor = newest?.older
        var backThree: Int64? = nil
        for _ in 0..<3 {
            guard let id = cursor else { break }
            backThree = id
            cursor = try browser.transcript(accountID: accountID, jid: jid, position: .before(id), states: true, presence: true)?.older
        }
        // A message near the start of the conversation: step far back by id (ids are time ordered).
        let oldest = try browser.transcript(accountID: accountID, jid: jid, position: .after(0), states: false, presence: false)
        let deep = oldest?.newer ?? 0
        let hits = try browser.search("中国", before: nil).count
        print("  \(try browser.conversations().count) conversations; newest page of \(jid): \(newest?.messageCount ?? 0) messages; "
              + "\(hits) hits for 中国 on the first page")
        var rows: [(String, [Double])] = []
        func time(_ name: String, _ body: () throws -> Void) rethrows {
            try body()
            var times: [Double] = []
            for _ in 0..<repeats {
                let start = DispatchTime.now().uptimeNanoseconds
                try body()
                times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
            }
            rows.append((name, times))
        }
        try time("conversation list") { _ = try browser.conversations() }
        try time("newest page (states, presence)") { _ = try browser.transcript(accountID: accountID, jid: jid, position: .newest, states: true, presence: true) }
        try time("third page back") { _ = try browser.transcript(accountID: accountID, jid: jid, position: .before(backThree ?? 0), states: true, presence: true) }
        try time("page near the oldest message") { _ = try browser.transcript(accountID: accountID, jid: jid, position: .before(deep), states: true, presence: true) }
        try time("open in context (deep)") { _ = try browser.transcript(accountID: accountID, jid: jid, position: .around(deep), states: true, presence: true) }
        try time("search: a Latin word") { _ = try browser.search("the", before: nil) }
        try time("search: a Chinese word") { _ = try browser.search("中国", before: nil) }
        try time("search: word, next page") { _ = try browser.search("the", before: try browser.search("the", before: nil).next) }
        try time("live check, nothing new") {
            _ = try browser.live(accountID: accountID, jid: jid, after: newest?.live ?? .init(afterID: 0, afterTimestamp: 0), states: true, presence: true)
        }
        return rows
    }

    private static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    private static func cell(_ values: [Double]) -> String { String(format: "%.2f / %.2f", median(values), values.max() ?? 0) }
    private static func pad(_ text: String, _ width: Int) -> String { text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count) }
}
