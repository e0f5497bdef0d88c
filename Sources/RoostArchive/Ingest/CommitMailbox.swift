/// Where the archive writer's messages about one submitter's submissions arrive, in submission order: "committed"
/// (the outcomes, the downloads to queue), "refused", "abandoned", each with the `Context` the submitter gave
/// (what it has to do once it knows: the stanzas to acknowledge, the notifications to post). The submitter reads
/// `messages` on its own side (a session, on its actor); the writer thread only posts.
///
/// Never dropping, and bounded without a limit of its own: every message answers one submission, so the mailbox
/// holds at most the submitter's submissions in flight — those the writer's bounded queue holds (its capacity in
/// events, each submission costing at least one), plus the batches committed since the reader last ran.
public final class CommitMailbox<Context: Sendable>: Sendable {
    public struct Message: Sendable {
        public let context: Context
        public let outcome: ArchiveWriter.Outcome
    }

    public let messages: AsyncStream<Message>
    private let continuation: AsyncStream<Message>.Continuation

    public init() {
        (messages, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    func poster(_ context: Context) -> @Sendable (ArchiveWriter.Outcome) -> Void {
        { [continuation] outcome in continuation.yield(Message(context: context, outcome: outcome)) }
    }

    /// Ends `messages` for its reader once it has read what was posted; a later message is not delivered.
    public func close() {
        continuation.finish()
    }
}
