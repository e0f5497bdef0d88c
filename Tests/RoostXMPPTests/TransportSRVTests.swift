@testable import RoostXMPP
import Testing

/// A deterministic generator (SplitMix64) so ordering tests are repeatable.
struct TransportSeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("Transport: SRV")
struct TransportSRVTests {
    func record(_ priority: UInt16, _ weight: UInt16, _ target: String) -> SRVRecord {
        SRVRecord(priority: priority, weight: weight, port: 5222, target: target)
    }

    // No live lookup here: tests send nothing beyond loopback, and the resolver is not on loopback.

    @Test func lowerPriorityAlwaysComesFirst() {
        var generator = TransportSeededGenerator(state: 1)
        let records = [record(20, 5, "c"), record(10, 0, "a"), record(30, 100, "d"), record(10, 50, "b")]
        for _ in 0..<100 {
            let ordered = SRVOrdering.ordered(records, using: &generator)
            #expect(ordered.map(\.priority) == [10, 10, 20, 30])
            #expect(Set(ordered.map(\.target)) == ["a", "b", "c", "d"])
        }
    }

    @Test func weightsShareFirstPlaceProportionally() {
        var generator = TransportSeededGenerator(state: 42)
        let records = [record(0, 10, "light"), record(0, 30, "heavy"), record(0, 0, "zero")]
        var firsts: [String: Int] = [:]
        let rounds = 20_000
        for _ in 0..<rounds {
            firsts[SRVOrdering.ordered(records, using: &generator)[0].target, default: 0] += 1
        }
        // Expected shares: heavy 30/41, light 10/41, zero 1/41 (a draw of exactly 0).
        let heavy = Double(firsts["heavy", default: 0]) / Double(rounds)
        let light = Double(firsts["light", default: 0]) / Double(rounds)
        let zero = Double(firsts["zero", default: 0]) / Double(rounds)
        #expect(abs(heavy - 30.0 / 41.0) < 0.02)
        #expect(abs(light - 10.0 / 41.0) < 0.02)
        #expect(zero < 0.05)
    }

    @Test func allZeroWeightsKeepEveryRecord() {
        var generator = TransportSeededGenerator(state: 7)
        let records = [record(5, 0, "x"), record(5, 0, "y"), record(5, 0, "z")]
        #expect(SRVOrdering.ordered(records, using: &generator).count == 3)
        #expect(SRVOrdering.ordered([], using: &generator) == [])
    }

    /// A DNS response for `_xmpp-client._tcp.example.test` with the given SRV rdata targets.
    func response(_ answers: [(priority: UInt16, weight: UInt16, port: UInt16, target: [UInt8])]) -> [UInt8] {
        func u16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
        var message: [UInt8] = u16(0x1234) + u16(0x8180) + u16(1) + u16(UInt16(answers.count)) + u16(0) + u16(0)
        for label in ["_xmpp-client", "_tcp", "example", "test"] {
            message.append(UInt8(label.utf8.count))
            message += Array(label.utf8)
        }
        message += [0] + u16(33) + u16(1)
        for answer in answers {
            let rdata = u16(answer.priority) + u16(answer.weight) + u16(answer.port) + answer.target
            message += [0xC0, 12] + u16(33) + u16(1) + [0, 0, 0x0E, 0x10] + u16(UInt16(rdata.count)) + rdata
        }
        return message
    }

    @Test func parsesRecordsIncludingCompressedTargets() {
        let exampleTestOffset: UInt8 = 12 + 13 + 5   // "example.test" inside the question name
        let xmpp: [UInt8] = [4] + Array("xmpp".utf8) + [0xC0, exampleTestOffset]
        let backup: [UInt8] = [6] + Array("backup".utf8) + [3] + Array("net".utf8) + [0]
        let message = response([(10, 60, 5222, xmpp), (20, 0, 5269, backup)])
        #expect(SRVResolver.parse(answer: message, length: message.count) == [
            SRVRecord(priority: 10, weight: 60, port: 5222, target: "xmpp.example.test"),
            SRVRecord(priority: 20, weight: 0, port: 5269, target: "backup.net"),
        ])
    }

    @Test func dotTargetMeansServiceNotOffered() {
        let message = response([(0, 0, 0, [0])])
        #expect(SRVResolver.parse(answer: message, length: message.count) == [])
    }

    @Test func truncatedResponseIsEmptyNotACrash() {
        let message = response([(10, 60, 5222, [4] + Array("xmpp".utf8) + [0])])
        #expect(SRVResolver.parse(answer: message, length: message.count - 5) == [])
        #expect(SRVResolver.parse(answer: message, length: 3) == [])
    }
}
