import Foundation
import RoostAgent
import RoostArchive

/// `roost send JID TEXT`: one chat message, archived like any other; `--file PATH` uploads and sends a file.
struct SendCommand: Command {
    static let name = "send"
    static let summary = "send a chat message (text from the arguments or stdin) or a file (--file)"
    static let usage = "[options] WHO [TEXT...]"
    static let arguments: [ArgumentKind] = [.contact, .text]
    static let discussion = """
        Sends TEXT (the remaining arguments joined by spaces, or, without them, everything read from standard \
        input) to WHO as a chat message. WHO is a JID, or a roster name, nickname, full name or the start of a \
        JID the archive knows (one that fits several contacts is an error listing them). It is archived as pending first and as sent once the server \
        confirms it; a message larger than the server accepts (XEP-0478, else `max_send_bytes`, 256 KiB) is \
        refused before anything is sent (exit 2). Goes through the running agent; when none runs, roost logs \
        in once itself with the same config, sends and logs out. While the agent's account is offline \
        (reconnecting), a chat message to a contact is archived and queued (at most 1000), and the agent sends \
        the queue in order once the account is online again; messages to rooms, into encrypted conversations \
        (unless --plaintext) and files are refused then. \
        When the conversation is encrypted (its newest message was OMEMO-encrypted, or `omemo_send = always`), \
        the message is encrypted for every trusted device of JID and of your own account; a contact without \
        OMEMO devices is then an error, and sending plaintext into the conversation needs --plaintext.
        With --file PATH, uploads the file to the server's HTTP upload service (XEP-0363; a progress bar on a \
        terminal) and sends its link the way other clients show as a file (the URL as the body, with XEP-0066 \
        and XEP-0447 name, type, size and SHA-256); TEXT, if given, is sent first as its own message. roost send \
        reads the file itself and copies it into the archive's file store, where the agent finds it (a service \
        with a private /tmp could not read PATH); it is archived as sent. The server's size limit and quota are \
        reported as such.
        """
    static let options: [OptionSpec] = [
        .flag("plaintext", help: "send unencrypted even into an OMEMO-encrypted conversation"),
        .value("file", placeholder: "PATH", help: "upload and send this file (XEP-0363)").completing(.file),
    ]

    let jid: String
    let text: String?
    let plaintext: Bool
    let file: String?

    init(parsed: ParsedArguments) throws(UsageError) {
        guard let first = parsed.positionals.first else { throw UsageError("missing JID", command: parsed.command) }
        jid = first
        let words = parsed.positionals.dropFirst()
        text = words.isEmpty ? nil : words.joined(separator: " ")
        plaintext = parsed.flag("plaintext")
        file = parsed.value("file")
        if file?.isEmpty == true { throw UsageError("--file needs a path", command: parsed.command) }
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let link = try AgentLink(context: context, command: "roost send")
        let to = try link.contact(jid, kinds: [.contact, .room])
        if let file { return try await send(file: file, to: to, link: link, context: context) }
        var body = text
        if body == nil {
            if isatty(STDIN_FILENO) == 1 { context.output.note("reading the message from standard input; end it with Ctrl-D") }
            let data = FileHandle.standardInput.readDataToEndOfFile()
            var typed = String(decoding: data, as: UTF8.self)
            if typed.hasSuffix("\n") { typed.removeLast() }
            body = typed
        }
        let (sent, route) = try await link.perform(SendMessageAction(to: to, body: body ?? "", plaintext: plaintext))
        if context.options.json {
            context.output.jsonLine(["ok": true, "to": .string(sent.to), "id": .string(sent.id),
                                     "timestamp": .string(TimeText.utc(sent.timestamp)), "via": .string(route.rawValue),
                                     "confirmed": .bool(sent.confirmed ?? true), "queued": .bool(sent.queued ?? false),
                                     "encryption": .string(sent.encryption)])
        } else if sent.queued == true {
            context.output.line("queued for \(sent.to): the account is offline (the agent is reconnecting); the agent sends it once it is back online")
        } else if sent.confirmed == false {
            context.output.line("queued for \(sent.to); the server has not confirmed it yet (roost delivers it when it can)")
        } else {
            context.output.line("sent to \(sent.to)" + (sent.encryption != nil ? " (OMEMO, \(sent.devices ?? 0) devices)" : ""))
        }
        return .ok
    }

    private func send(file: String, to jid: String, link: AgentLink, context: CommandContext) async throws -> ExitCode {
        let path = file.hasPrefix("/") ? file : FileManager.default.currentDirectoryPath + "/" + file
        let name = (path as NSString).lastPathComponent
        // Read here, not by the agent, which may not see the path (systemd's PrivateTmp gives it a /tmp of its own).
        let action = try SendFileAction.staging(to: jid, path: path, text: text, plaintext: plaintext, archivePath: link.config.archivePath)
        let meter = ProgressMeter(output: context.output, enabled: context.output.standardErrorIsTTY && !context.options.quiet, noun: "bytes")
        let (sent, route) = try await link.perform(action) { progress in
            meter.show(text: ProgressMeter.bar(name: name, progress))
        }
        meter.clear()
        if context.options.json {
            context.output.jsonLine(["ok": true, "to": .string(sent.to), "id": .string(sent.id), "url": .string(sent.url),
                                     "name": .string(sent.name), "mime": .string(sent.type), "size": .int(sent.size),
                                     "sha256": .string(sent.sha256), "timestamp": .string(TimeText.utc(sent.timestamp)),
                                     "via": .string(route.rawValue), "confirmed": .bool(sent.confirmed ?? true),
                                     "encryption": .string(sent.encryption)])
        } else if sent.confirmed == false {
            context.output.line("uploaded \(sent.name) (\(FileSize.text(sent.size))); the link to \(sent.to) is queued: the server has not confirmed it yet")
        } else {
            context.output.line("sent \(sent.name) (\(FileSize.text(sent.size))) to \(sent.to)" + (sent.encryption != nil ? " (encrypted, OMEMO)" : ""))
        }
        return .ok
    }
}
