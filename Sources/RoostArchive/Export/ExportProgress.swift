import RoostCore

/// How far an export or import has got, reported a few times per second.
public struct ExportProgress: Sendable, Equatable {
    /// Messages written (or lines imported) so far.
    public var done: Int
    /// How many there will be in all, when known.
    public var total: Int?
    public var elapsedSeconds: Double

    public init(done: Int, total: Int?, elapsedSeconds: Double) {
        self.done = done
        self.total = total
        self.elapsedSeconds = elapsedSeconds
    }

    public var ratePerSecond: Double { elapsedSeconds > 0 ? Double(done) / elapsedSeconds : 0 }

    /// Seconds left at the current rate, when the total is known.
    public var remainingSeconds: Double? {
        guard let total, ratePerSecond > 0 else { return nil }
        return Double(max(0, total - done)) / ratePerSecond
    }

    /// `12 345/100 000 messages  48 210/s  ETA 0:02` — one status line for a terminal.
    public func line(noun: String) -> String {
        var text = "\(done)" + (total.map { "/\($0)" } ?? "") + " \(noun)"
        text += "  \(Int(ratePerSecond.rounded()))/s"
        if let remaining = remainingSeconds {
            let seconds = Int(remaining.rounded())
            text += "  ETA \(seconds / 3600 > 0 ? "\(seconds / 3600):" : "")\(CivilTime.pad(seconds / 60 % 60, seconds >= 3600 ? 2 : 1)):\(CivilTime.pad(seconds % 60))"
        }
        return text
    }
}
