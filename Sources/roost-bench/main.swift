import Foundation

// roost-bench: benchmarks that print figures (never pass/fail). Each lives in its own file:
//   search   SearchBench.swift   — FTS5 vs LIKE on a synthetic archive
//   export   ExportBench.swift   — jsonl export MB/s vs the sqlite3 CLI, peak RSS (issue: export)
//   xml      XMLBench.swift      — XMLStreamParser stanzas/s vs Foundation's XMLParser
//   notify   NotifyBench.swift   — Notifier.post cost without a notification server vs dropped posts
//   serve    ServeBench.swift    — web view page times at a small and a large archive (issue 19)
let arguments = Array(CommandLine.arguments.dropFirst())
let benchmarks: [String: ([String]) throws -> Void] = [
    "search": SearchBench.run,
    "export": ExportBench.run,
    "xml": XMLBench.run,
    "notify": NotifyBench.run,
    "serve": ServeBench.run,
]
guard let name = arguments.first, let bench = benchmarks[name] else {
    FileHandle.standardError.write(Data("usage: roost-bench {\(benchmarks.keys.sorted().joined(separator: "|"))} [options]\n".utf8))
    exit(2)
}
do {
    try bench(Array(arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("roost-bench: \(error)\n".utf8))
    exit(1)
}
