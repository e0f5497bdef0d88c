import Foundation
@testable import RoostCore

/// Target `date`: the program's one date codec (`Timestamp`, `CivilTime`).
///
/// Properties:
/// - parsing never crashes, whatever the bytes;
/// - what parses is written back and read again to the same millisecond (`parse(rfc3339(parse(s))) == parse(s)`);
/// - the first eight bytes as an `Int64` `x`: `parse(rfc3339(x)) == x` (every stored time can be printed and read
///   back), and its civil time in any offset of ±18 h has fields in range.
enum DateFuzz {
    static func check(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        if let ms = Timestamp.parse(utf8: bytes) {
            let text = Timestamp.rfc3339(ms)
            guard Timestamp.parse(text) == ms else { return "parse(rfc3339(\(ms))) is \(String(describing: Timestamp.parse(text))), text \(text)" }
        }
        guard bytes.count >= 8 else { return nil }
        var x: Int64 = 0
        for index in 0..<8 { x = x << 8 | Int64(bytes[index]) }
        let text = Timestamp.rfc3339(x)
        guard Timestamp.parse(text) == x else { return "\(x) is written \(text), read back as \(String(describing: Timestamp.parse(text)))" }
        let offset = bytes.count >= 10 ? (Int(bytes[8]) << 8 | Int(bytes[9])) % (36 * 3600) - 18 * 3600 : 0
        let civil = CivilTime(milliseconds: x, offsetSeconds: offset)
        guard (1...12).contains(civil.month), (1...CivilTime.daysInMonth(year: civil.year, month: civil.month)).contains(civil.day),
              (0..<24).contains(civil.hour), (0..<60).contains(civil.minute), (0..<60).contains(civil.second),
              (0..<1000).contains(civil.millisecond), (0..<7).contains(civil.weekday) else {
            return "\(x) at offset \(offset) gives \(civil)"
        }
        return nil
    }
}
