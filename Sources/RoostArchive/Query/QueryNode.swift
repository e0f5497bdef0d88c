/// The parsed form of a search query.
public indirect enum QueryNode: Sendable, Equatable {
    /// No words and no filters: every message.
    case all
    case text(TextTerm)
    case filter(QueryFilter)
    case and([QueryNode])
    case or([QueryNode])
    case not(QueryNode)
}
