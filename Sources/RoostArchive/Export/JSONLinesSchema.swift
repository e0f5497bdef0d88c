/// The version of the jsonl schema; bump it when a field changes meaning or disappears (adding fields
/// does not need a bump: readers ignore unknown fields).
public enum JSONLinesSchema {
    public static let version = 1
}
