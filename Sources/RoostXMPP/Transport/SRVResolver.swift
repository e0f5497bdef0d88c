internal import CResolv
import Glibc

/// DNS SRV lookups through the system resolver (libresolv), with a private `res_state` per call so
/// that lookups from several threads do not share resolver state.
public enum SRVResolver {
    /// The records for `name` (e.g. `_xmpp-client._tcp.example.org`) in RFC 2782 order; empty when
    /// the name has none, DNS fails, or the domain says the service is not offered (target ".").
    public static func lookup(_ name: String) -> [SRVRecord] {
        var generator = SystemRandomNumberGenerator()
        return SRVOrdering.ordered(query(name), using: &generator)
    }

    static func query(_ name: String) -> [SRVRecord] {
        var state = roost_res_state()
        guard roost_res_ninit(&state) == 0 else { return [] }
        defer { roost_res_nclose(&state) }

        var answer = [UInt8](repeating: 0, count: 8192)
        let length = roost_res_nquery(&state, name, Int32(ns_c_in.rawValue), Int32(ns_t_srv.rawValue),
                                      &answer, Int32(answer.count))
        guard length > 0 else { return [] }
        return parse(answer: answer, length: min(Int(length), answer.count))
    }

    /// Parses the answer section of a DNS response; records that are not SRV or are malformed are skipped.
    static func parse(answer: [UInt8], length: Int) -> [SRVRecord] {
        answer.withUnsafeBufferPointer { buffer -> [SRVRecord] in
            guard let base = buffer.baseAddress else { return [] }
            var message = ns_msg()
            guard ns_initparse(base, Int32(length), &message) == 0 else { return [] }
            var records: [SRVRecord] = []
            let count = roost_ns_msg_count(message, ns_s_an)
            for index in 0..<count {
                var rr = ns_rr()
                guard ns_parserr(&message, ns_s_an, index, &rr) == 0,
                      rr.type == UInt16(ns_t_srv.rawValue),
                      rr.rdlength > 6,
                      let rdata = rr.rdata else { continue }
                let priority = UInt16(rdata[0]) << 8 | UInt16(rdata[1])
                let weight = UInt16(rdata[2]) << 8 | UInt16(rdata[3])
                let port = UInt16(rdata[4]) << 8 | UInt16(rdata[5])
                var nameBuffer = [CChar](repeating: 0, count: Int(NS_MAXDNAME))
                guard roost_dn_expand(base, base + length, rdata + 6, &nameBuffer, Int32(nameBuffer.count)) >= 0 else {
                    continue
                }
                let target = String(decoding: nameBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                records.append(SRVRecord(priority: priority, weight: weight, port: port, target: trimmedTarget(target)))
            }
            // RFC 2782: a lone "." target means the service is decidedly not available here.
            return records.filter { !$0.target.isEmpty }
        }
    }

    private static func trimmedTarget(_ target: String) -> String {
        target.hasSuffix(".") ? String(target.dropLast()) : target
    }
}
