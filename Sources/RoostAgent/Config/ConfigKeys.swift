import RoostCore
import RoostArchive

/// Stores one parsed value into a draft.
typealias ConfigKeySetter<Draft> = @Sendable (inout Draft, String, ConfigPaths) throws(ConfigValueError) -> Void

/// Every key Roost understands, by group kind. Adding a key is one line here plus its field in the draft.
/// `[notify]` and `[sink NAME]` are absent on purpose: the notification layer validates those.
enum ConfigKeys {
    typealias Parse = ConfigValueParser

    static let general: [String: ConfigKeySetter<SettingsDraft>] = [
        "log_level": { draft, value, _ throws(ConfigValueError) in draft.logLevel = try SettingValue.choice(value, of: LogLevel.self) },
        "max_stanza_bytes": { draft, value, _ throws(ConfigValueError) in
            draft.maxStanzaBytes = try SettingValue.integer(value, in: 16_384...134_217_728, what: "a size in bytes")
        },
        "keepalive_seconds": { draft, value, _ throws(ConfigValueError) in
            draft.keepaliveSeconds = try SettingValue.integer(value, in: 5...3600, what: "a number of seconds")
        },
        "reconnect_max_seconds": { draft, value, _ throws(ConfigValueError) in
            draft.reconnectMaxSeconds = try SettingValue.integer(value, in: 1...86_400, what: "a number of seconds")
        },
        "archive_poll_seconds": { draft, value, _ throws(ConfigValueError) in
            draft.archivePollSeconds = try SettingValue.integer(value, in: 0...86_400, what: "a number of seconds")
        },
        "max_send_bytes": { draft, value, _ throws(ConfigValueError) in
            draft.maxSendBytes = try SettingValue.integer(value, in: 1024...134_217_728, what: "a size in bytes")
        },
        "archive_stall_seconds": { draft, value, _ throws(ConfigValueError) in
            draft.archiveStallSeconds = try SettingValue.integer(value, in: 10...86_400, what: "a number of seconds")
        },
        "room_ping_seconds": { draft, value, _ throws(ConfigValueError) in
            draft.roomPingSeconds = try SettingValue.integer(value, in: 10...86_400, what: "a number of seconds")
        },
        "default_account": { draft, value, _ throws(ConfigValueError) in draft.defaultAccount = try Parse.bareJID(value) },
    ]

    static let archive: [String: ConfigKeySetter<SettingsDraft>] = [
        "path": { draft, value, paths throws(ConfigValueError) in
            let path = try Parse.path(value, paths: paths)
            try FileChecks.archive(path)
            draft.archivePath = path
        },
        "keep_retracted": { draft, value, _ throws(ConfigValueError) in draft.keepRetracted = try SettingValue.boolean(value) },
    ]

    static let files: [String: ConfigKeySetter<FilesSettings>] = [
        "download": { draft, value, _ throws(ConfigValueError) in draft.download = try SettingValue.choice(value, of: FilesSettings.Download.self) },
        "max_size": { draft, value, _ throws(ConfigValueError) in draft.maxSize = try Parse.size(value) },
        "allow_private_addresses": { draft, value, _ throws(ConfigValueError) in draft.allowPrivateAddresses = try SettingValue.boolean(value) },
        "retry_seconds": { draft, value, _ throws(ConfigValueError) in
            draft.retrySeconds = try SettingValue.integer(value, in: 1...86_400, what: "a number of seconds")
        },
        "max_transfer_seconds": { draft, value, _ throws(ConfigValueError) in
            draft.maxTransferSeconds = try SettingValue.integer(value, in: 5...86_400, what: "a number of seconds")
        },
        "min_rate": { draft, value, _ throws(ConfigValueError) in draft.minRate = try Parse.sizeOrZero(value) },
        "quota": { draft, value, _ throws(ConfigValueError) in draft.quota = try Parse.sizeOrZero(value) },
        "quota_per_contact": { draft, value, _ throws(ConfigValueError) in draft.quotaPerContact = try Parse.sizeOrZero(value) },
        "min_free": { draft, value, _ throws(ConfigValueError) in draft.minFree = try Parse.sizeOrZero(value) },
    ]

    static let serve: [String: ConfigKeySetter<ServeConfig>] = [
        "enabled": { draft, value, _ throws(ConfigValueError) in draft.enabled = try SettingValue.boolean(value) },
        "port": { draft, value, _ throws(ConfigValueError) in
            draft.port = UInt16(try SettingValue.integer(value, in: 0...65_535, what: "a port (0 for any free one)"))
        },
        "listen": { draft, value, _ throws(ConfigValueError) in draft.listen = try Parse.ipAddress(value) },
        "allow_remote": { draft, value, _ throws(ConfigValueError) in draft.allowRemote = try SettingValue.boolean(value) },
        "allow_hosts": { draft, value, _ throws(ConfigValueError) in
            draft.allowHosts = try value.split(separator: ",").map { name throws(ConfigValueError) in
                try Parse.hostname(String(name.trimmingSpaces))
            }
        },
    ]

    static let backup: [String: ConfigKeySetter<BackupConfig>] = [
        "backup_key_command": { draft, value, _ throws(ConfigValueError) in draft.keyCommand = try Parse.nonEmpty(value) },
        "every": { draft, value, _ throws(ConfigValueError) in draft.every = try Parse.interval(value) },
        "keep": { draft, value, _ throws(ConfigValueError) in
            draft.keep = try SettingValue.integer(value, in: 1...10_000, what: "a number of backups")
        },
        "path": { draft, value, paths throws(ConfigValueError) in draft.path = try Parse.path(value, paths: paths) },
        "encrypt": { draft, value, _ throws(ConfigValueError) in draft.encrypt = try SettingValue.boolean(value) },
    ]

    static let mirror: [String: ConfigKeySetter<MirrorConfig>] = [
        "maildir": { draft, value, paths throws(ConfigValueError) in draft.maildir = try Parse.path(value, paths: paths) },
        "split": { draft, value, _ throws(ConfigValueError) in draft.split = try SettingValue.choice(value, of: ExportSplit.self) },
        "query": { draft, value, _ throws(ConfigValueError) in
            do {
                _ = try ArchiveReader.parse(value)
            } catch {
                throw ConfigValueError("not a query: \(error)")
            }
            draft.query = value
        },
        "read_from_mirror": { draft, value, _ throws(ConfigValueError) in draft.readFromMirror = try SettingValue.boolean(value) },
        "attachments": { draft, value, _ throws(ConfigValueError) in
            switch value.trimmingCharacters(in: .whitespaces).lowercased() {
            case "true", "yes", "on": draft.attachmentLimit = ExportOptions.defaultMailAttachmentLimit
            case "false", "no", "off": draft.attachmentLimit = nil
            default:
                do {
                    draft.attachmentLimit = try Parse.size(value)
                } catch {
                    throw ConfigValueError("expected true, false or a size such as 10M, got '\(value)'")
                }
            }
        },
    ]

    static let account: [String: ConfigKeySetter<AccountDraft>] = [
        "password": { draft, value, _ throws(ConfigValueError) in draft.password = try Parse.nonEmpty(value) },
        "password_command": { draft, value, _ throws(ConfigValueError) in draft.passwordCommand = try Parse.nonEmpty(value) },
        "host": { draft, value, _ throws(ConfigValueError) in draft.host = try Parse.hostname(value) },
        "port": { draft, value, _ throws(ConfigValueError) in draft.port = try Parse.port(value) },
        "tls": { draft, value, _ throws(ConfigValueError) in draft.tls = try SettingValue.choice(value, of: TLSModeSetting.self) },
        "ca_file": { draft, value, paths throws(ConfigValueError) in
            let path = try Parse.path(value, paths: paths)
            try FileChecks.certificates(path)
            draft.caFile = path
        },
        "fingerprint": { draft, value, _ throws(ConfigValueError) in draft.fingerprint = try Parse.fingerprint(value) },
        "resource": { draft, value, _ throws(ConfigValueError) in draft.resource = try Parse.nonEmpty(value) },
        "priority": { draft, value, _ throws(ConfigValueError) in draft.priority = try SettingValue.integer(value, in: -128...127, what: "a priority") },
        "enabled": { draft, value, _ throws(ConfigValueError) in draft.enabled = try SettingValue.boolean(value) },
        "omemo": { draft, value, _ throws(ConfigValueError) in draft.omemo = try SettingValue.boolean(value) },
        "omemo_send": { draft, value, _ throws(ConfigValueError) in draft.omemoSend = try SettingValue.choice(value, of: OMEMOSendSetting.self) },
        "nick": { draft, value, _ throws(ConfigValueError) in draft.nick = try Parse.nick(value) },
        "rooms": { draft, value, _ throws(ConfigValueError) in draft.rooms = try Parse.roomList(value) },
        "exclude_rooms": { draft, value, _ throws(ConfigValueError) in draft.excludedRooms = try Parse.roomList(value) },
        "accept_invitations": { draft, value, _ throws(ConfigValueError) in
            draft.acceptInvitations = try SettingValue.choice(value, of: InvitationAcceptance.self)
        },
        "highlight_words": { draft, value, _ throws(ConfigValueError) in draft.highlightWords = try Parse.highlightWords(value) },
    ]

    static let room: [String: ConfigKeySetter<RoomDraft>] = [
        "account": { draft, value, _ throws(ConfigValueError) in draft.account = try Parse.bareJID(value) },
        "nick": { draft, value, _ throws(ConfigValueError) in draft.nick = try Parse.nick(value) },
        "password": { draft, value, _ throws(ConfigValueError) in draft.password = try Parse.nonEmpty(value) },
        "password_command": { draft, value, _ throws(ConfigValueError) in draft.passwordCommand = try Parse.nonEmpty(value) },
        "highlight_words": { draft, value, _ throws(ConfigValueError) in draft.highlightWords = try Parse.highlightWords(value) },
    ]
}
