/// The RFC 2782 selection order for SRV records: lowest priority first, and within one priority a
/// weighted random draw, so that servers get a share of first attempts proportional to their weight.
enum SRVOrdering {
    static func ordered<G: RandomNumberGenerator>(_ records: [SRVRecord], using generator: inout G) -> [SRVRecord] {
        let priorities = Set(records.map(\.priority)).sorted()
        var result: [SRVRecord] = []
        result.reserveCapacity(records.count)
        for priority in priorities {
            // Zero-weight records go first so that the running-sum draw gives them only the
            // tiny chance RFC 2782 intends (a draw of exactly 0).
            var remaining = records.filter { $0.priority == priority && $0.weight == 0 }
                + records.filter { $0.priority == priority && $0.weight != 0 }
            while !remaining.isEmpty {
                let total = remaining.reduce(0) { $0 + Int($1.weight) }
                let draw = Int.random(in: 0...total, using: &generator)
                var runningSum = 0
                var chosen = remaining.count - 1
                for (index, record) in remaining.enumerated() {
                    runningSum += Int(record.weight)
                    if runningSum >= draw {
                        chosen = index
                        break
                    }
                }
                result.append(remaining.remove(at: chosen))
            }
        }
        return result
    }
}
