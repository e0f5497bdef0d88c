import Foundation
import RoostCore

/// A complete RFC 5322 mail: UTF-8 plain text body in base64, non-ASCII headers as RFC 2047 words.
struct MailMessage {
    var fromName: String
    var fromAddress: String
    var to: [String]
    var subject: String
    var body: String
    /// UTC milliseconds; written in the local zone.
    var date: Int64

    func rendered() -> Data {
        let domain = fromAddress.split(separator: "@").last.map(String.init) ?? "localhost"
        let normalized = body.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n")
        let encodedBody = Data(normalized.utf8).base64EncodedString(options: [.lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed])
        let lines = [
            "From: \(EncodedWords.displayName(fromName)) <\(fromAddress)>",
            "To: " + to.map { "<\($0)>" }.joined(separator: ", "),
            "Subject: \(EncodedWords.header(subject))",
            "Date: \(ZoneClock.local().civil(date).rfc5322)",
            "Message-ID: <\(UUID().uuidString.lowercased())@\(domain)>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: base64",
            "Auto-Submitted: auto-generated",
            "X-Mailer: Roost",
            "",
            encodedBody,
            "",
        ]
        return Data(lines.joined(separator: "\r\n").utf8)
    }
}
