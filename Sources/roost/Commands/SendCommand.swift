import Foundation
import RoostAgent

/// `roost send JID TEXT`: one chat message, archived like any other.
struct SendCommand: Command {
    static let name = "send"
    static let summary = "send a chat message (text from the arguments or stdin)"
    static let usage = "[options] JID [TEXT...]"
    static let discussion = """
        Sends TEXT (the remaining arguments joined by spaces, or, without them, everything read from standard \
        input) to JID as a chat message. It is archived as pending first and as sent once the server \
        confirms it; a message larger than the server accepts (XEP-0478, else `max_send_bytes`, 256 KiB) is \
        refused before anything is sent (exit 2). Goes through the running agent; when none runs, roost logs \
        in once itself with the same config, sends and logs out. \
        When the conversation is encrypted (its newest message was OMEMO-encrypted, or `omemo_send = always`), \
        the message is encrypted for every trusted device of JID and of your own account; a contact without \
        OMEMO devices is then an error, and sending plaintext into the conversation needs --plaintext.
        """
    static let options: [OptionSpec] = [
        .flag("plaintext", help: "send unencrypted even into an OMEMO-encrypted conversation"),
    ]

    let jid: String
    let text: String?
    let plaintext: Bool

    init(parsed: ParsedArguments) throws(UsageError) {
        guard let first = parsed.positionals.first else { throw UsageError("missing JID", command: parsed.command) }
        jid = first
        let words = parsed.positionals.dropFirst()
        text = words.isEmpty ? nil : words.joined(separator: " ")
        plaintext = parsed.flag("plaintext")
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let link = try AgentLink(context: context, command: "roost send")
        var body = text
        if body == nil {
            if isatty(STDIN_FILENO) == 1 { context.output.note("reading the message from standard input; end it with Ctrl-D") }
            let data = FileHandle.standardInput.readDataToEndOfFile()
            var typed = String(decoding: data, as: UTF8.self)
            if typed.hasSuffix("\n") { typed.removeLast() }
            body = typed
        }
        let (sent, route) = try await link.perform(SendMessageAction(to: jid, body: body ?? "", plaintext: plaintext))
        if context.options.json {
            context.output.jsonLine(["ok": true, "to": .string(sent.to), "id": .string(sent.id),
                                     "timestamp": .string(TimeText.utc(sent.timestamp)), "via": .string(route.rawValue),
                                     "confirmed": .bool(sent.confirmed ?? true),
                                     "encryption": .string(sent.encryption)])
        } else if sent.confirmed == false {
            context.output.line("queued for \(sent.to); the server has not confirmed it yet (roost delivers it when it can)")
        } else {
            context.output.line("sent to \(sent.to)" + (sent.encryption != nil ? " (OMEMO, \(sent.devices ?? 0) devices)" : ""))
        }
        return .ok
    }
}
