/// Exponential backoff with full jitter: retries spread out so many agents do not hammer a recovering server.
struct Backoff: Sendable {
    var base: Duration = .seconds(1)
    var cap: Duration = .seconds(300)
    private(set) var attempt = 0

    init(base: Duration = .seconds(1), cap: Duration = .seconds(300)) {
        self.base = base
        self.cap = cap
    }

    /// The delay before the next attempt: a random point in [base/2, min(cap, base·2^attempt)].
    mutating func nextDelay() -> Duration {
        let exponent = min(attempt, 20)
        attempt += 1
        let ceiling = min(cap, base * (1 << exponent))
        let low = base / 2
        guard ceiling > low else { return ceiling }
        let span = (ceiling - low) / .milliseconds(1)
        return low + .milliseconds(Int64(Double.random(in: 0...span)))
    }

    mutating func reset() { attempt = 0 }
}
