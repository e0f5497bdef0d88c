/// An event that can be merged by time with events of other tables.
protocol TimeOrderedEvent {
    var timestamp: Int64 { get }
}

/// One statement's rows, already in time order, read one event ahead so several of them (messages, chat
/// states, presence) can be streamed as one time-ordered sequence without loading any of them.
final class TimeOrderedCursor<Event: TimeOrderedEvent> {
    let statement: Statement
    /// Returns nil for a row to skip.
    private let read: (Statement.Row) throws(SQLiteError) -> Event?
    private(set) var current: Event?

    init(statement: Statement, parameters: [SQLValue], read: @escaping (Statement.Row) throws(SQLiteError) -> Event?) throws(SQLiteError) {
        self.statement = statement
        self.read = read
        statement.reset()
        try statement.bind(parameters)
        try advance()
    }

    func advance() throws(SQLiteError) {
        while try statement.step() {
            if let event = try read(Statement.Row(statement: statement)) {
                current = event
                return
            }
        }
        current = nil
    }

    /// The cursor holding the earliest pending event; ties go to the earlier cursor (a message before the
    /// state change stamped the same millisecond).
    static func earliest(_ cursors: [TimeOrderedCursor]) -> TimeOrderedCursor? {
        var next: TimeOrderedCursor?
        for cursor in cursors {
            guard let event = cursor.current else { continue }
            if let best = next?.current, best.timestamp <= event.timestamp { continue }
            next = cursor
        }
        return next
    }
}
