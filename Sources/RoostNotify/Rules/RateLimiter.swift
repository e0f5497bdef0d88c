/// `max_per_minute`: a sliding one-minute window over delivered notifications.
struct RateLimiter {
    let perMinute: Int
    private var recent: [Int64] = []

    init(perMinute: Int) {
        self.perMinute = perMinute
    }

    /// Records a delivery at `now` (milliseconds) if the cap allows it.
    mutating func admit(now: Int64) -> Bool {
        guard perMinute > 0 else { return true }
        recent.removeAll { now - $0 >= 60_000 }
        guard recent.count < perMinute else { return false }
        recent.append(now)
        return true
    }
}
