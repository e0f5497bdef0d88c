/// Optional event kinds an export can carry besides messages (`--include states,presence,contacts`).
public enum ExportInclusion: String, Sendable, CaseIterable, Hashable {
    /// Chat-state notifications (composing, paused, …).
    case states
    /// Contacts' presence changes.
    case presence
    /// Roster and vCard fields of the contacts (names, groups, avatars); only jsonl writes them as events,
    /// the other formats use them for names and avatars in any case.
    case contacts
}
