import Foundation
import RoostAgent
import RoostArchive
import RoostXMPP

/// `roost vcard show|set`: contacts' profile cards from the local cache or the server; the own card's update.
struct VCardCommand: Command {
    static let name = "vcard"
    static let summary = "show a contact's vCard (cached, or --refresh from the server); set your own"
    static let usage = "[options] show [WHO] [--refresh] | set [--nickname N] [--fullname F] [--photo FILE | --no-photo]"
    static let arguments: [ArgumentKind] = [.subcommands([Subcommand("show", [.contact]), Subcommand("set")])]
    static let discussion = """
        Without a subcommand, lists the vCards cached in the archive (contacts whose card was fetched: \
        nickname, full name, photo). show WHO prints the vCard (full name, nickname, photo...) cached in the archive; the first time, or with \
        --refresh, it is fetched from the server and the cache updated. Photos are kept in the avatars/ folder \
        next to the archive, named by their SHA-1. Without JID, your own card.
        set updates your own vCard (XEP-0054): fields not given stay as they are; --photo FILE (PNG, JPEG, GIF, \
        at most 256 KiB) sets the photo, --no-photo removes it. The photo's hash is announced in your presence \
        (XEP-0153) and, where the server supports PEP, the avatar is published there too (XEP-0084).
        Server access goes through the running agent; when none runs, roost logs in once itself with the same \
        config, acts and logs out.
        """
    static let options: [OptionSpec] = [
        .flag("refresh", help: "show: fetch from the server even when cached"),
        .value("nickname", placeholder: "NICK", help: "set: your nickname (\"\" removes it)"),
        .value("fullname", placeholder: "NAME", help: "set: your full name (\"\" removes it)"),
        .value("photo", placeholder: "FILE", help: "set: an image file for your photo").completing(.file),
        .flag("no-photo", help: "set: remove your photo"),
    ]

    enum Action {
        case list
        case show(jid: String?, refresh: Bool)
        case set(nickname: String?, fullName: String?, photo: String?, removePhoto: Bool)
    }

    let action: Action

    init(parsed: ParsedArguments) throws(UsageError) {
        let words = parsed.positionals
        switch words.first {
        case "show":
            guard words.count <= 2 else { throw UsageError("usage: roost vcard show [JID] [--refresh]", command: parsed.command) }
            action = .show(jid: words.count == 2 ? words[1] : nil, refresh: parsed.flag("refresh"))
        case "set":
            guard words.count == 1 else { throw UsageError("`vcard set` takes options only", command: parsed.command) }
            let nickname = parsed.value("nickname"), fullName = parsed.value("fullname"), photo = parsed.value("photo")
            let remove = parsed.flag("no-photo")
            if photo != nil && remove { throw UsageError("--photo and --no-photo contradict each other", command: parsed.command) }
            guard nickname != nil || fullName != nil || photo != nil || remove else {
                throw UsageError("nothing to set: give --nickname, --fullname, --photo or --no-photo", command: parsed.command)
            }
            action = .set(nickname: nickname, fullName: fullName, photo: photo, removePhoto: remove)
        case nil:
            action = .list
        case let other?:
            throw UsageError("unknown vcard subcommand '\(other)' (show, set)", command: parsed.command)
        }
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let listing = if case .list = action { true } else { false }
        let link = try AgentLink(context: context, command: "roost vcard", reading: listing)
        switch action {
        case .list:
            return try list(link: link, context: context)
        case .show(let jid, let refresh):
            let contact = try JIDArgument.bare(try jid.map { try link.contact($0) } ?? link.account.jid).description
            if !refresh, let cached = try cached(contact, link: link) {
                print(cached, route: nil, context: context)
                return .ok
            }
            let (info, route) = try await link.perform(VCardFetchAction(jid: contact))
            print(info, route: route, context: context)
        case .set(let nickname, let fullName, let photoPath, let removePhoto):
            var photo: Data?
            if let photoPath {
                guard let data = FileManager.default.contents(atPath: photoPath) else {
                    throw ActionFailure(.invalidArgument, "cannot read the photo \(photoPath)")
                }
                photo = data
            }
            let (published, route) = try await link.perform(VCardPublishAction(nickname: nickname, fullName: fullName, photo: photo,
                                                                               removePhoto: removePhoto))
            print(published.vcard, route: route, context: context, pep: published.pep)
        }
        return .ok
    }

    private func list(link: AgentLink, context: CommandContext) throws -> ExitCode {
        guard FileManager.default.fileExists(atPath: link.config.archivePath) else {
            if !context.options.json { context.output.note("no vCards cached yet (no archive)") }
            return .nothingFound
        }
        let reader = try ArchiveAccess.reader(link.context)
        let cards = try reader.contacts(account: link.account.jid, includeRemoved: true).filter { $0.vCardFetchedAt != nil }
        for card in cards {
            if context.options.json {
                context.output.jsonLine(["jid": .string(card.jid), "nickname": .string(card.nickname), "fullname": .string(card.fullName),
                                         "photo_path": .string(card.photoPath),
                                         "fetched_at": card.vCardFetchedAt.map { .string(TimeText.utc($0)) } ?? .null])
            } else {
                let names = [card.nickname, card.fullName].compactMap { $0 }.joined(separator: ", ")
                context.output.line(card.jid + (names.isEmpty ? "" : "  \(names)") + (card.photoPath != nil ? "  [photo]" : "")
                                    + (card.vCardFetchedAt.map { "  fetched \(TimeText.local($0))" } ?? ""))
            }
        }
        if cards.isEmpty {
            if !context.options.json { context.output.note("no vCards cached for \(link.account.jid); `roost vcard show WHO` fetches one") }
            return .nothingFound
        }
        return .ok
    }

    /// The card as cached by an earlier fetch; nil when it was never fetched.
    private func cached(_ jid: String, link: AgentLink) throws -> VCardInfo? {
        guard FileManager.default.fileExists(atPath: link.config.archivePath) else { return nil }
        let reader = try ArchiveAccess.reader(link.context)
        guard let row = try reader.contact(account: link.account.jid, jid: jid), let fetched = row.vCardFetchedAt else { return nil }
        var vcard = row.vCardRaw.flatMap(VCardInfo.parseRaw) ?? VCard()
        vcard.nickname = row.nickname
        vcard.fullName = row.fullName
        var info = VCardInfo(jid: row.jid, vcard: vcard, photoHash: row.photoHash, photoPath: row.photoPath, fetchedAt: fetched)
        if let path = row.photoPath { info.photoType = Self.mimeType(ofFile: path) }
        return info
    }

    private static func mimeType(ofFile path: String) -> String? {
        switch (path as NSString).pathExtension.lowercased() {
        case "png": "image/png"
        case "jpg", "jpeg": "image/jpeg"
        case "gif": "image/gif"
        case "webp": "image/webp"
        default: nil
        }
    }

    private func print(_ info: VCardInfo, route: AgentLink.Route?, context: CommandContext, pep: Bool? = nil) {
        let output = context.output
        if context.options.json {
            var object: JSONObject = [
                "jid": .string(info.jid), "fullname": .string(info.fullName), "nickname": .string(info.nickname),
                "given_name": .string(info.givenName), "family_name": .string(info.familyName), "email": .string(info.email),
                "url": .string(info.url), "note": .string(info.note), "photo_type": .string(info.photoType),
                "photo_hash": .string(info.photoHash), "photo_path": .string(info.photoPath),
                "fetched_at": info.fetchedAt.map { .string(TimeText.utc($0)) } ?? .null,
                "source": .string(route == nil ? "cache" : "server"),
            ]
            if let route { object["via"] = .string(route.rawValue) }
            if let pep { object["pep"] = .bool(pep) }
            output.jsonLine(object)
            return
        }
        output.line(info.jid)
        let fields: [(String, String?)] = [("full name", info.fullName), ("nickname", info.nickname), ("given name", info.givenName),
                                           ("family name", info.familyName), ("email", info.email), ("url", info.url),
                                           ("note", info.note), ("photo", info.photoPath.map { "\($0) (sha1 \(info.photoHash ?? "?"))" })]
        for (label, value) in fields { if let value { output.line("  \(label): \(value)") } }
        if fields.allSatisfy({ $0.1 == nil }) { output.line("  (empty vCard)") }
        if let fetched = info.fetchedAt {
            output.line("  \(route == nil ? "cached" : "fetched") \(TimeText.local(fetched))" + (pep == true ? "; avatar also published over PEP" : ""))
        }
    }
}
