import RoostCore

/// Turns a chat message into an RFC 5322 message that mail tools (notmuch, mutt, mu, Python's `mailbox`)
/// read and index: UTF-8 text as quoted-printable, encoded-word headers, a stable Message-ID, and
/// In-Reply-To/References chaining the messages of one conversation into one thread.
struct MailMessageBuilder {
    let clock: ZoneClock
    let contacts: ContactDirectory
    let addresses: AddressMemo

    /// The addresses (`address`) of the last few JIDs asked: a conversation's mails name the same few senders and
    /// recipients over and over (and the archive's reader hands the same String for a repeated JID, which compares
    /// at once). Confined to its writer's thread.
    final class AddressMemo {
        private var jids: [String] = []
        private var found: [String] = []

        func address(_ jid: String) -> String {
            for index in jids.indices where jids[index] == jid { return found[index] }
            let address = MailMessageBuilder.address(jid)
            if jids.count == 4 {
                jids.removeFirst()
                found.removeFirst()
            }
            jids.append(jid)
            found.append(address)
            return address
        }
    }

    /// A Message-ID that is the same on every export of the same message, from fields that survive an import:
    /// two 64-bit FNV-1a hashes of the fields joined by NUL bytes, computed in one pass without joining them.
    static func messageID(_ message: MessageRow) -> String {
        var hash = FieldHash()
        hash.addLowercased(message.account)
        hash.nextField()
        hash.addLowercased(message.conversation)
        hash.nextField()
        hash.add(message.from)
        hash.nextField()
        if message.stanzaIdTrusted, let stanzaId = message.stanzaId { hash.add(stanzaId) }
        hash.nextField()
        if let originId = message.originId { hash.add(originId) }
        hash.nextField()
        if let messageId = message.messageId { hash.add(messageId) }
        hash.nextField()
        hash.addDecimal(message.timestamp)
        hash.nextField()
        if let body = message.versions.first?.body ?? message.body { hash.add(body) }
        // `<roost.` + the two hashes in 32 lower-case hex digits + `@export.roost.invalid>`, written in place.
        let prefix = "<roost.".utf8, suffix = "@export.roost.invalid>".utf8
        return String(unsafeUninitializedCapacity: prefix.count + 32 + suffix.count) { buffer in
            var index = 0
            for byte in prefix { buffer[index] = byte; index += 1 }
            func hex(_ value: UInt64) {
                for shift in stride(from: 60, through: 0, by: -4) {
                    let digit = UInt8(truncatingIfNeeded: value >> UInt64(shift)) & 0x0F
                    buffer[index] = digit < 10 ? 0x30 + digit : 0x57 + digit
                    index += 1
                }
            }
            hex(hash.first)
            hex(hash.second)
            for byte in suffix { buffer[index] = byte; index += 1 }
            return index
        }
    }

    /// The two FNV-1a hashes of `messageID`, fed field by field (a field boundary hashes as a NUL byte).
    private struct FieldHash {
        static let prime: UInt64 = 0x0000_0100_0000_01b3
        var first: UInt64 = 0xcbf2_9ce4_8422_2325
        var second: UInt64 = 0x6c62_272e_07bb_0142

        mutating func nextField() {
            first = first &* Self.prime
            second = second &* Self.prime
        }

        mutating func add(_ text: String) {
            var text = text
            text.withUTF8 { for byte in $0 { add(byte) } }
        }

        mutating func addDecimal(_ value: Int64) {
            MailMessageBuilder.forEachDigit(of: value) { add($0) }
        }

        /// `text.lowercased()`'s bytes; ASCII (nearly every JID) is lowered by byte, without making a copy.
        mutating func addLowercased(_ text: String) {
            guard text.utf8.allSatisfy({ $0 < 0x80 }) else { return add(text.lowercased()) }
            for byte in text.utf8 { add(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte) }
        }

        @inline(__always)
        mutating func add(_ byte: UInt8) {
            first = (first ^ UInt64(byte)) &* Self.prime
            second = (second ^ UInt64(byte)) &* Self.prime
        }
    }

    /// `String(value)`'s bytes, one by one, without making the String: the digits taken off the end into a buffer
    /// on the stack (divisions by the constant 10, which compile to multiplications; a row number has 19 digits).
    @inline(__always)
    static func forEachDigit(of value: Int64, _ body: (UInt8) -> Void) {
        if value < 0 { body(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = 20
            repeat {
                let (quotient, remainder) = magnitude.quotientAndRemainder(dividingBy: 10)
                start -= 1
                digits[start] = UInt8(truncatingIfNeeded: 0x30 + remainder)
                magnitude = quotient
            } while magnitude > 0
            for index in start..<20 { body(digits[index]) }
        }
    }

    /// An address for a JID: the bare JID (mail addresses have no resource).
    static func address(_ jid: String) -> String {
        let bare = JIDText.bare(jid)
        // ASCII (nearly every JID): by byte, without the Unicode property lookups of `isWhitespace`, and
        // without a copy when there is nothing to drop (the usual case).
        let clean: String
        if bare.utf8.allSatisfy({ $0 < 0x80 }) {
            let dropped = { (byte: UInt8) -> Bool in
                byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: ",")
                    || byte == 0x20 || (0x09...0x0D).contains(byte)
            }
            clean = bare.utf8.contains(where: dropped) ? String(decoding: bare.utf8.filter { !dropped($0) }, as: UTF8.self) : bare
        } else {
            clean = String(bare.filter { $0 != "<" && $0 != ">" && $0 != "\"" && !$0.isWhitespace && $0 != "," })
        }
        return clean.isEmpty ? "unknown@invalid" : clean
    }

    /// The complete message, LF line ends, appended to `out` as bytes (no String for the message, its headers
    /// or its body's encoding; header values are appended as they are read, not joined first). `first` and
    /// `previous` are the conversation's first and previous Message-IDs. `fromAddress` is `address(message.from)`
    /// (an mbox writes it in its `From ` line too).
    func build(_ message: MessageRow, slice: ConversationSlice, messageID: String, fromAddress: String, first: String?,
               previous: String?, embedded: [MailAttachment?], into out: inout [UInt8]) {
        func name(_ name: StaticString) {
            out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            out.append(contentsOf: ": ".utf8)
        }
        func header(_ header: StaticString, _ value: String) {
            name(header)
            out.append(contentsOf: value.utf8)
            out.append(0x0A)
        }
        let sender = contacts.sender(of: message, accountID: slice.accountID)
        let toIsAccount = message.direction == .incoming
        name("From")
        MIMEText.appendMailbox(name: sender == "me" ? nil : sender, address: fromAddress, to: &out)
        out.append(0x0A)
        name("To")
        MIMEText.appendMailbox(name: toIsAccount ? nil : contacts.title(of: slice), address: addresses.address(message.to), to: &out)
        out.append(0x0A)
        name("Date")
        clock.civil(message.timestamp).appendRFC5322(to: &out)
        out.append(0x0A)
        name("Subject")
        if let subject = message.subject, !subject.isEmpty {
            MIMEText.appendHeaderText(subject, to: &out)
        } else {
            appendDefaultSubject(message, slice: slice, to: &out)
        }
        out.append(0x0A)
        header("Message-ID", messageID)
        if let previous {
            header("In-Reply-To", previous)
            name("References")
            if let first, first != previous {
                out.append(contentsOf: first.utf8)
                out.append(contentsOf: "\n ".utf8)
            }
            out.append(contentsOf: previous.utf8)
            out.append(0x0A)
        }
        let parts = embedded.compactMap { $0 }
        header("MIME-Version", "1.0")
        let boundary: String = parts.isEmpty ? "" : "roost-" + messageID.dropFirst("<roost.".count).prefix(32)
        if parts.isEmpty {
            header("Content-Type", "text/plain; charset=utf-8")
            header("Content-Transfer-Encoding", "quoted-printable")
        } else {
            header("Content-Type", "multipart/mixed; boundary=\"\(boundary)\"")
        }
        header("X-Roost-Account", message.account)
        header("X-Roost-Conversation", message.conversation)
        header("X-Roost-Direction", message.direction.rawValue)
        header("X-XMPP-Type", message.kind.rawValue)
        if let stanzaId = message.stanzaId {
            name("X-XMPP-Stanza-ID")
            MIMEText.appendHeaderText(stanzaId, to: &out)
            out.append(0x0A)
        }
        out.append(0x0A)
        if parts.isEmpty {
            MIMEText.appendQuotedPrintable(body(message, embedded: embedded), to: &out)
            out.append(0x0A)
            return
        }
        out.append(contentsOf: "This is a MIME message with attachments.\n\n--\(boundary)\n".utf8)
        out.append(contentsOf: "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\n".utf8)
        MIMEText.appendQuotedPrintable(body(message, embedded: embedded), to: &out)
        out.append(0x0A)
        for part in parts {
            out.append(contentsOf: "--\(boundary)\n".utf8)
            out.append(contentsOf: part.part.utf8)
        }
        out.append(contentsOf: "--\(boundary)--\n".utf8)
    }

    /// The subject of a message without one: `Chat with NAME` or `Room NAME` (NAME: the conversation's title, then
    /// its address in brackets when they differ), appended as `MIMEText.appendHeaderText` would: printable ASCII
    /// piece by piece (no `=?` can form where the pieces meet: each piece before another ends in a space or is
    /// followed by one, or by `)`), anything else joined and encoded.
    private func appendDefaultSubject(_ message: MessageRow, slice: ConversationSlice, to out: inout [UInt8]) {
        let title = contacts.title(of: slice)
        let prefix = message.kind == .groupchat ? "Room " : "Chat with "
        guard MIMEText.isPlainASCII(title) && MIMEText.isPlainASCII(slice.conversation) else {
            let name = title == slice.conversation ? slice.conversation : "\(title) (\(slice.conversation))"
            return MIMEText.appendHeaderText(prefix + name, to: &out)
        }
        out.append(contentsOf: prefix.utf8)
        if title != slice.conversation {
            out.append(contentsOf: title.utf8)
            out.append(contentsOf: " (".utf8)
            out.append(contentsOf: slice.conversation.utf8)
            out.append(UInt8(ascii: ")"))
        } else {
            out.append(contentsOf: slice.conversation.utf8)
        }
    }

    private func body(_ message: MessageRow, embedded: [MailAttachment?]) -> String {
        var text = TranscriptPhrases.text(of: message, clock: clock)
        for (attachment, file) in zip(message.attachments, embedded) {
            text += (text.isEmpty ? "" : "\n\n") + "Attachment: \(attachment.url)" + (file.map { " (attached: \($0.fileName))" } ?? "")
        }
        if message.versions.count > 1, !message.retracted || message.body != nil {
            text += "\n\n-- \nEdited \(message.versions.count - 1) time(s). Earlier versions:"
            for revision in message.versions.dropLast() {
                let time = clock.civil(revision.timestamp)
                text += "\n[\(time.dateText) \(time.secondText)] " + (revision.body ?? "")
            }
        }
        return text
    }
}
