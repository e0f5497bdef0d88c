/// Result order of a search.
public enum SearchOrder: Sendable, Equatable {
    case newestFirst
    case oldestFirst
    /// bm25 relevance among the newest `ArchiveReader.rankCandidateLimit` matches (so a very common word
    /// costs a bounded time); queries without words fall back to newest first.
    case rank
}
