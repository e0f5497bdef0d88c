import Foundation
import RoostAgent
import RoostXMPP

/// `roost register JID`: creates an account in-band, with an optional first vCard (the seed's sign-up flow).
struct RegisterCommand: Command {
    static let name = "register"
    static let summary = "create an account on its server (in-band registration), optionally with a first vCard"
    static let usage = "[options] JID"
    static let discussion = """
        Creates JID on its server (XEP-0077), asking for the password twice without echo, or taking the first \
        line printed by --password-command. With --nickname, --fullname or --photo the new account gets its \
        first vCard right away. Always logs in by itself (the agent does not serve a new account yet); then \
        prints the [account] group to add to the config file, with the connection settings it used \
        (or run `roost config init`, which also writes it).
        Connection settings (host, port, tls, ca_file, fingerprint) come from the options, else from a \
        configured account with the same JID or domain, else DNS.
        """
    static let options: [OptionSpec] = [
        .value("password-command", placeholder: "CMD", help: "run CMD (via /bin/sh) and use the first line it prints as the password"),
        .value("nickname", placeholder: "NICK", help: "first vCard: nickname"),
        .value("fullname", placeholder: "NAME", help: "first vCard: full name"),
        .value("photo", placeholder: "FILE", help: "first vCard: photo (PNG, JPEG, GIF, at most 256 KiB)").completing(.file),
        .value("host", placeholder: "HOST", help: "server to connect to instead of the JID's domain (SRV)"),
        .value("port", placeholder: "PORT", help: "port on the server"),
        .value("tls", placeholder: "MODE", help: "starttls (default) or direct").completing(.choices(["starttls", "direct"])),
        .value("ca-file", placeholder: "FILE", help: "PEM file of CA certificates to trust").completing(.file),
    ]

    /// A path as the config needs it: absolute.
    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") || path.hasPrefix("~") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    let jid: JID
    let parsed: ParsedArguments

    init(parsed: ParsedArguments) throws(UsageError) {
        let text = try parsed.onePositional(named: "JID")
        guard let jid = JID(parsing: text), jid.localpart != nil, jid.isBare else {
            throw UsageError("'\(text)' is not an account JID (expected name@server)", command: parsed.command)
        }
        self.jid = jid
        if let tls = parsed.value("tls"), !["starttls", "direct"].contains(tls) {
            throw UsageError("--tls must be starttls or direct", command: parsed.command)
        }
        _ = try parsed.integer("port", in: 1...65535)
        self.parsed = parsed
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let config = try context.loadConfig()
        let template = config.account(jid.description) ?? config.accounts.first { $0.jid.hasSuffix("@" + jid.domain) }
        let password = try await NewPassword.obtain(command: parsed.value("password-command"), account: jid.description,
                                              prompt: "Password for \(jid)")
        var photo: Data?
        if let path = parsed.value("photo") {
            guard let data = FileManager.default.contents(atPath: path) else { throw ActionFailure(.invalidArgument, "cannot read the photo \(path)") }
            photo = data
        }
        let nickname = parsed.value("nickname"), fullName = parsed.value("fullname")
        let firstVCard = (nickname != nil || fullName != nil || photo != nil)
            ? VCardPublishAction(nickname: nickname, fullName: fullName, photo: photo) : nil
        let tls = parsed.value("tls") ?? (template?.tls == .direct ? "direct" : "starttls")
        let settings = AccountRegistration.Settings(
            jid: jid, password: password, host: parsed.value("host") ?? template?.host,
            port: (try? parsed.integer("port", in: 1...65535)).flatMap { $0.map(UInt16.init) } ?? template?.port,
            directTLS: tls == "direct", caFile: parsed.value("ca-file").map(Self.absolute) ?? template?.caFile,
            fingerprint: template?.fingerprint)
        let published = try await AccountRegistration.register(settings, firstVCard: firstVCard,
                                                               dataDirectory: (config.archivePath as NSString).deletingLastPathComponent)
        let output = context.output
        if context.options.json {
            output.jsonLine(["ok": true, "jid": .string(jid.description), "vcard": .bool(published != nil),
                             "photo_hash": .string(published?.vcard.photoHash)])
        } else {
            output.line("registered \(jid)" + (published != nil ? " with its first vCard" : ""))
            if config.account(jid.description) == nil {
                // The connection settings this registration actually used, so the new account connects the same way.
                var lines = ["[account \(jid)]"]
                if parsed.value("password-command") != nil {
                    // Not repeated: a command may hold a secret (`echo …`), and this goes to the terminal.
                    lines.append("password_command = <the command given with --password-command>")
                } else {
                    lines.append("password_command = <a command printing the password, e.g. pass show xmpp/\(jid)>")
                }
                if let host = settings.host { lines.append("host = \(host)") }
                if let port = settings.port { lines.append("port = \(port)") }
                if settings.directTLS { lines.append("tls = direct") }
                if let caFile = settings.caFile { lines.append("ca_file = \(caFile)") }
                if let fingerprint = settings.fingerprint { lines.append("fingerprint = \(fingerprint)") }
                let file = config.sourcePath ?? RoostConfig.searchedPath(explicitPath: context.options.configPath, environment: context.environment)
                output.note("To let roost use it, add to \(file):\n\n" + lines.joined(separator: "\n"))
            }
        }
        return .ok
    }
}
