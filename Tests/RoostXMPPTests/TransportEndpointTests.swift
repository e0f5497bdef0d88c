@testable import RoostXMPP
import Testing

@Suite("Transport: endpoint resolution")
struct TransportEndpointTests {
    let srv: [String: [SRVRecord]] = [
        "_xmpps-client._tcp.example.test": [
            SRVRecord(priority: 5, weight: 0, port: 443, target: "tls.example.test"),
            SRVRecord(priority: 10, weight: 0, port: 5223, target: "direct.example.test"),
        ],
        "_xmpp-client._tcp.example.test": [
            SRVRecord(priority: 7, weight: 0, port: 5222, target: "early.example.test"),
            SRVRecord(priority: 10, weight: 0, port: 5222, target: "plain.example.test"),
        ],
    ]

    func resolve(domain: String = "example.test", host: String? = nil, port: UInt16? = nil, _ mode: TLSMode) -> [Endpoint] {
        EndpointResolver.endpoints(domain: domain, explicitHost: host, explicitPort: port, mode: mode) { srv[$0] ?? [] }
    }

    @Test func explicitHostIsUsedAlone() {
        #expect(resolve(host: "10.0.0.1", .starttls) == [Endpoint(host: "10.0.0.1", port: 5222, directTLS: false)])
        #expect(resolve(host: "h", port: 443, .direct) == [Endpoint(host: "h", port: 443, directTLS: true)])
        #expect(resolve(port: 5300, .starttls) == [Endpoint(host: "example.test", port: 5300, directTLS: false)])
    }

    @Test func startTLSModeMergesBothRecordSetsByPriority() {
        #expect(resolve(.starttls) == [
            Endpoint(host: "tls.example.test", port: 443, directTLS: true),
            Endpoint(host: "early.example.test", port: 5222, directTLS: false),
            Endpoint(host: "direct.example.test", port: 5223, directTLS: true),
            Endpoint(host: "plain.example.test", port: 5222, directTLS: false),
        ])
    }

    @Test func mergePrefersDirectTLSOnEqualPriority() {
        let merged = EndpointResolver.mergeByPriority(
            directTLS: [SRVRecord(priority: 5, weight: 0, port: 443, target: "d1"),
                        SRVRecord(priority: 10, weight: 0, port: 5223, target: "d2")],
            startTLS: [SRVRecord(priority: 7, weight: 0, port: 5222, target: "s1"),
                       SRVRecord(priority: 10, weight: 0, port: 5222, target: "s2")])
        #expect(merged == [
            Endpoint(host: "d1", port: 443, directTLS: true),
            Endpoint(host: "s1", port: 5222, directTLS: false),
            Endpoint(host: "d2", port: 5223, directTLS: true),
            Endpoint(host: "s2", port: 5222, directTLS: false),
        ])
    }

    @Test func directModeUsesOnlyDirectTLSRecords() {
        #expect(resolve(.direct) == [
            Endpoint(host: "tls.example.test", port: 443, directTLS: true),
            Endpoint(host: "direct.example.test", port: 5223, directTLS: true),
        ])
    }

    @Test func fallsBackToTheDomainWithoutSRV() {
        #expect(resolve(domain: "bare.test", .starttls) == [Endpoint(host: "bare.test", port: 5222, directTLS: false)])
        #expect(resolve(domain: "bare.test", .direct) == [Endpoint(host: "bare.test", port: 5223, directTLS: true)])
    }
}
