import Foundation
import Glibc
import RoostTestSupport
import RoostXMPP
import Testing

@Suite("Transport: Socket")
struct TransportSocketTests {
    @Test func sendAndReceiveOverLoopback() throws {
        let listener = try #require(TransportTestListener())
        let socket = try Socket.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        defer { socket.close() }
        let server = listener.accept()
        defer { close(server) }

        try socket.send(Array("<stream>".utf8))
        #expect(transportReadExactly(server, 8) == Array("<stream>".utf8))
        _ = "</features>".withCString { send(server, $0, 11, 0) }
        #expect(try socket.receive(timeout: .seconds(5)) == Array("</features>".utf8))
        #expect(socket.peerDescription.contains("127.0.0.1"))
        #expect(socket.peerDescription.contains("\(listener.port)"))
    }

    @Test func connectsByNameToo() throws {
        // "localhost" may resolve to ::1 first; the listener is on 127.0.0.1, so that address must be tried too.
        let listener = try #require(TransportTestListener())
        let socket = try Socket.connect(host: "localhost", port: listener.port, timeout: .seconds(5))
        defer { socket.close() }
        let server = listener.accept()
        defer { close(server) }
        #expect(socket.peerDescription.contains("127.0.0.1:\(listener.port)"), "\(socket.peerDescription)")
        try socket.send(Array("by name".utf8))
        #expect(transportReadExactly(server, 7) == Array("by name".utf8))
    }

    @Test func receiveTimeoutReturnsEmpty() throws {
        let listener = try #require(TransportTestListener())
        let socket = try Socket.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        defer { socket.close() }
        let server = listener.accept()
        defer { close(server) }

        let start = ContinuousClock.now
        #expect(try socket.receive(timeout: .milliseconds(150)) == [])
        #expect(ContinuousClock.now - start >= .milliseconds(150))
    }

    @Test func orderlyEndOfStreamReturnsNil() throws {
        let listener = try #require(TransportTestListener())
        let socket = try Socket.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        defer { socket.close() }
        close(listener.accept())
        #expect(try socket.receive(timeout: .seconds(5)) == nil)
    }

    @Test func closeWakesABlockedReceive() throws {
        let listener = try #require(TransportTestListener())
        let socket = try Socket.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        let server = listener.accept()
        defer { close(server) }

        let reader = TransportBackgroundWork { () -> String in
            do {
                return "returned \(String(describing: try socket.receive(timeout: nil)))"
            } catch {
                return "threw \(error)"
            }
        }
        // Only a receive that is really waiting proves that close wakes it.
        #expect(reader.waitUntilBlockedInPoll(seconds: 5))
        socket.close()
        #expect(reader.wait(seconds: 5) == "threw \(TransportError.closed)")
        socket.close()
        #expect(throws: TransportError.closed) { try socket.send([1]) }
        #expect(throws: TransportError.closed) { try socket.receive(timeout: .zero) }
    }

    @Test func largeSendWaitsForTheReader() throws {
        let listener = try #require(TransportTestListener())
        let socket = try Socket.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        defer { socket.close() }
        let server = listener.accept()
        defer { close(server) }

        let payload = (0..<4_000_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let reader = TransportBackgroundWork { transportReadExactly(server, payload.count) }
        try socket.send(payload)
        #expect(reader.wait(seconds: 30) == payload)
    }

    @Test func concurrentSendsDoNotInterleave() throws {
        let listener = try #require(TransportTestListener())
        let socket = try Socket.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        defer { socket.close() }
        let server = listener.accept()
        defer { close(server) }

        let chunk = 50_000
        let writers = (0..<4).map { writer in
            TransportBackgroundWork { () -> Bool in
                for _ in 0..<5 {
                    guard (try? socket.send([UInt8](repeating: UInt8(writer + 1), count: chunk))) != nil else { return false }
                }
                return true
            }
        }
        let received = transportReadExactly(server, 4 * 5 * chunk)
        for writer in writers { #expect(writer.wait(seconds: 30) == true) }
        #expect(received.count == 4 * 5 * chunk)
        for start in stride(from: 0, to: received.count, by: chunk) {
            #expect(Set(received[start..<start + chunk]).count == 1)
        }
    }

    @Test func connectToAClosedPortFails() throws {
        let port: UInt16
        do {
            let listener = try #require(TransportTestListener())
            port = listener.port
        }
        #expect {
            try Socket.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))
        } throws: { error in
            guard case let TransportError.connectFailed(host, failedPort, reason) = error else { return false }
            return host == "127.0.0.1" && failedPort == port && !reason.isEmpty
        }
    }

    @Test(.requires(.ipv6Loopback)) func ipv6Loopback() throws {
        try TestRequirement.check(.ipv6Loopback)
        let listener = try #require(TransportTestListener(address: "::1"))
        let socket = try Socket.connect(host: "::1", port: listener.port, timeout: .seconds(5))
        defer { socket.close() }
        let server = listener.accept()
        defer { close(server) }

        try socket.send([1, 2, 3])
        #expect(transportReadExactly(server, 3) == [1, 2, 3])
        #expect(socket.peerDescription.contains("[::1]"))
    }
}
