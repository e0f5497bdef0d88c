import Foundation
import RoostArchive
import RoostCore
import RoostNotify
import Synchronization

/// Which watches the messages a session just archived match: the `[watch NAME]` groups (every account), and
/// `highlight_words` (the account's in its rooms, a `[room JID]` group's in that room), which make a room message
/// notify like a mention. Each account's watches are compiled by the search's parser and compiler
/// (`ArchiveReader.compileWatches`, again after `WatchQueries.lifetime`) and evaluated once per batch of messages
/// (`ArchiveReader.watchMatches`): on each new message's own fields, then, for what those leave undecided, one statement
/// over those rows only — never one per message or per watch.
final class WatchEvaluator: Sendable {
    /// One query: a watch's (by its name) or the highlight words' (name nil).
    struct Definition: Sendable, Hashable {
        var name: String?
        var query: String
    }

    private struct State {
        var watches: [WatchConfig] = []
        var archivePath: String?
        var reader: ArchiveReader?
        /// By account: the definitions and their compiled statements.
        var compiled: [String: (definitions: [Definition], queries: WatchQueries)] = [:]
        /// By account: what the last compilation logged of the queries it could not compile (logged again when it changes).
        var failures: [String: [String]] = [:]
    }

    private let state = Mutex(State())

    /// The `[watch NAME]` groups in use (at start and at each reload); `archivePath` once, at start.
    func configure(_ watches: [WatchConfig], archivePath: String? = nil) {
        state.withLock { state in
            state.watches = watches
            if let archivePath { state.archivePath = archivePath }
            state.compiled = [:]
            state.failures = [:]
        }
    }

    /// What `account`'s messages are matched against (nothing: no query runs).
    func definitions(for account: AccountConfig) -> [Definition] {
        let watches = state.withLock { $0.watches }
        var definitions = watches.map { Definition(name: $0.name, query: $0.query) }
        if !account.highlightWords.isEmpty { definitions.append(Definition(name: nil, query: Self.anyOf(account.highlightWords))) }
        for room in account.rooms where !room.highlightWords.isEmpty {
            definitions.append(Definition(name: nil, query: "in:\(room.jid) (\(Self.anyOf(room.highlightWords)))"))
        }
        return definitions
    }

    /// The new incoming messages of a batch as the watches read them (`ArchiveReader.watchMatches`), by archive id.
    static func messages(_ events: [ArchiveEvent], _ outcomes: [InsertOutcome]) -> [Int64: WatchMessage] {
        var messages: [Int64: WatchMessage] = [:]
        for (event, outcome) in zip(events, outcomes) {
            guard case .inserted(let id) = outcome, case .message(let record) = event, record.direction == .incoming else { continue }
            messages[id] = WatchMessage(id: id, record)
        }
        return messages
    }

    /// The words as phrases joined by OR (`highlight_words` has no quotes: `ConfigValueParser.highlightWords`).
    static func anyOf(_ words: [String]) -> String {
        words.map { "\"\($0)\"" }.joined(separator: " OR ")
    }

    /// For each of `ids` (`account`'s incoming messages just archived) that a watch selects, the definitions that
    /// select it; `messages` (what was stored under those ids) decide most without a statement. A failure is logged,
    /// and the messages notify by the rules alone; a query that cannot be compiled (`with:alice` before Alice is known)
    /// is logged once and selects nothing until the next compilation, the others going on without it.
    func matches(account: AccountConfig, ids: [Int64], messages: [Int64: WatchMessage], log: Logger) -> [Int64: [Definition]] {
        guard !ids.isEmpty else { return [:] }
        let definitions = definitions(for: account)
        guard !definitions.isEmpty else { return [:] }
        do throws(ArchiveError) {
            return try state.withLock { state throws(ArchiveError) -> [Int64: [Definition]] in
                if state.reader == nil, let path = state.archivePath { state.reader = try ArchiveReader(path: path) }
                guard let reader = state.reader else { return [:] }
                var entry = state.compiled[account.jid]
                if entry == nil || entry!.definitions != definitions || entry!.queries.isStale() {
                    let queries = try reader.compileWatches(definitions.map(\.query), account: account.jid)
                    entry = (definitions, queries)
                    state.compiled[account.jid] = entry
                    let failures = queries.failures.sorted { $0.key < $1.key }.map { index, error in
                        "\(definitions[index].name.map { "[watch \($0)]" } ?? "highlight_words") \(LogText.quote(definitions[index].query)): \(LogText.quote(error))"
                    }
                    if failures != state.failures[account.jid, default: []] {
                        for failure in failures { log.warning("\(account.jid): \(failure); it selects nothing until Roost can compile it") }
                        state.failures[account.jid] = failures
                    }
                }
                let hits = try reader.watchMatches(entry!.queries, ids: ids, messages: messages)
                return hits.mapValues { indexes in indexes.map { definitions[$0] } }
            }
        } catch {
            log.warning("\(account.jid): the watches could not be evaluated: \(LogText.quote(error)); these messages notify by the rules alone")
            return [:]
        }
    }
}
