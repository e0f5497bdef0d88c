import RoostCore
import RoostNotify
import RoostArchive

/// Reads, checks and assembles a `RoostConfig`, collecting every problem instead of stopping at the first.
struct ConfigLoader {
    let paths: ConfigPaths

    init(environment: [String: String]) {
        paths = ConfigPaths(environment: environment)
    }

    func load(explicitPath: String?) throws(ConfigError) -> RoostConfig {
        let file = paths.configFile(explicitPath: explicitPath)
        let contents: ConfigFileContents
        do {
            contents = try ConfigFileContents.read(path: file.path)
        } catch {
            switch error {
            case .missing:
                if let origin = file.explicitOrigin {
                    throw .fileNotFound(path: file.path, origin: origin)
                }
                return RoostConfig(archivePath: paths.defaultArchivePath)
            case let .failed(failure):
                throw failure
            }
        }
        return try parse(contents)
    }

    func parse(_ contents: ConfigFileContents) throws(ConfigError) -> RoostConfig {
        let path = contents.path
        let index = ConfigLineIndex(text: contents.text, path: path)
        if let secret = index.firstSecret, contents.isSharedWithOthers {
            throw .insecurePermissions(path: path, mode: contents.mode, key: secret.key, line: secret.line)
        }

        let keyFile: KeyFile
        do {
            keyFile = try KeyFile(text: index.stripped)
        } catch {
            // The line index explains syntax errors better, with line numbers; GLib's text is the fallback.
            let problems = index.problems.isEmpty
                ? [ConfigProblem(path: path, line: nil, message: error.message)]
                : index.problems
            throw .invalid(path: path, problems: problems)
        }

        var assembly = Assembly(path: path, index: index, paths: paths)
        assembly.problems = index.problems
        for group in keyFile.groups {
            assembly.read(group: group, from: keyFile)
        }
        assembly.attachRooms()
        // [notify] and [sink NAME] are checked here too, so `roost config` refuses exactly what `roost run` refuses,
        // and lists their problems with the others.
        let locations = index.locations(path: path)
        assembly.problems += NotifyConfig.parse(notify: assembly.notify, sinks: assembly.sinks, watches: assembly.watches).1.map {
            locations.problem(group: $0.group, key: $0.key, message: $0.message)
        }
        // A watch's query in the search language, parsed by the search's own parser.
        for (name, values) in assembly.watches.sorted(by: { $0.key < $1.key }) {
            guard let query = values["query"] else { continue }
            do throws(QueryError) {
                _ = try ArchiveReader.parse(query)
            } catch {
                assembly.problems.append(locations.problem(group: "watch \(name)", key: "query", message: "does not parse: \(error)"))
            }
        }
        let (retention, retentionProblems) = RetentionConfig.parse(assembly.retention)
        assembly.problems += retentionProblems.map { locations.problem(group: "retention", key: $0.key, message: $0.message) }
        if assembly.backup.encrypt && assembly.backup.keyCommand == nil {
            // The agent has no terminal to ask on.
            assembly.problems.append(locations.problem(group: "backup", key: "encrypt",
                                                       message: "encrypt = true needs backup_key_command: roost run has no terminal to ask for the passphrase"))
        }
        if !assembly.problems.isEmpty {
            throw .invalid(path: path, problems: assembly.problems.sorted { ($0.line ?? 0) < ($1.line ?? 0) })
        }
        var config = RoostConfig(
            archivePath: assembly.settings.archivePath ?? paths.defaultArchivePath,
            logLevel: assembly.settings.logLevel,
            maxStanzaBytes: assembly.settings.maxStanzaBytes ?? RoostConfig.defaultMaxStanzaBytes,
            accounts: assembly.accounts,
            notify: assembly.notify,
            sinks: assembly.sinks,
            watches: assembly.watches,
            sourcePath: path,
            locations: locations
        )
        config.retention = retention
        if let v = assembly.settings.keepaliveSeconds { config.keepaliveSeconds = v }
        if let v = assembly.settings.reconnectMaxSeconds { config.reconnectMaxSeconds = v }
        if let v = assembly.settings.archivePollSeconds { config.archivePollSeconds = v }
        if let v = assembly.settings.maxSendBytes { config.maxSendBytes = v }
        if let v = assembly.settings.archiveStallSeconds { config.archiveStallSeconds = v }
        config.defaultAccount = assembly.settings.defaultAccount
        config.files = assembly.files
        if let v = assembly.settings.roomPingSeconds { config.roomPingSeconds = v }
        if let v = assembly.settings.keepRetracted { config.keepRetracted = v }
        config.serve = assembly.serve
        config.backup = assembly.backup
        config.mirror = assembly.mirror
        return config
    }
}

extension ConfigLoader {
    /// The config under construction plus the problems found so far.
    private struct Assembly {
        let path: String
        let index: ConfigLineIndex
        let paths: ConfigPaths
        var problems: [ConfigProblem] = []
        var settings = SettingsDraft()
        var files = FilesSettings()
        var accounts: [AccountConfig] = []
        var notify: [String: String] = [:]
        var retention: [String: String] = [:]
        var serve = ServeConfig()
        var backup = BackupConfig()
        var mirror = MirrorConfig()
        var sinks: [String: [String: String]] = [:]
        var watches: [String: [String: String]] = [:]
        /// `[room JID]` groups, attached to their account once every group is read.
        var roomGroups: [(account: String?, room: RoomConfig, line: Int?)] = []

        init(path: String, index: ConfigLineIndex, paths: ConfigPaths) {
            self.path = path
            self.index = index
            self.paths = paths
        }

        mutating func read(group: String, from keyFile: KeyFile) {
            let headerLine = index.groupLines[group]
            let kind: ConfigGroup
            do {
                kind = try ConfigGroup(header: group)
            } catch {
                problems.append(ConfigProblem(path: path, line: headerLine, message: error.message))
                return
            }
            let values = rawValues(of: group, from: keyFile)
            switch kind {
            case .general:
                problems += apply(values, group: group, table: ConfigKeys.general, to: &settings)
            case .archive:
                problems += apply(values, group: group, table: ConfigKeys.archive, to: &settings)
            case .files:
                problems += apply(values, group: group, table: ConfigKeys.files, to: &files)
            case .notify:
                notify = values
            case .retention:
                retention = values
            case .serve:
                problems += apply(values, group: group, table: ConfigKeys.serve, to: &serve)
            case .backup:
                problems += apply(values, group: group, table: ConfigKeys.backup, to: &backup)
            case .mirror:
                problems += apply(values, group: group, table: ConfigKeys.mirror, to: &mirror)
            case let .sink(name):
                sinks[name] = values
            case let .watch(name):
                watches[name] = values
            case let .account(written):
                readAccount(written: written, group: group, values: values, headerLine: headerLine)
            case let .room(written):
                readRoom(written: written, group: group, values: values, headerLine: headerLine)
            }
        }

        private mutating func readRoom(written: String, group: String, values: [String: String], headerLine: Int?) {
            let jid: String
            do {
                jid = try ConfigValueParser.bareJID(written)
            } catch {
                problems.append(ConfigProblem(path: path, line: headerLine, message: error.message))
                return
            }
            var draft = RoomDraft()
            problems += apply(values, group: group, table: ConfigKeys.room, to: &draft)
            do {
                let (account, room) = try draft.build(jid: jid)
                roomGroups.append((account, room, headerLine))
            } catch {
                problems.append(ConfigProblem(path: path, line: headerLine, message: "room \(jid) \(error.message)"))
            }
        }

        /// Each `[room]` group joins its `account` (or the only account), replacing a plain `rooms =` entry.
        mutating func attachRooms() {
            for (account, room, line) in roomGroups {
                let target: Int?
                if let account {
                    target = accounts.firstIndex { $0.jid == account }
                    if target == nil {
                        problems.append(ConfigProblem(path: path, line: line, message: "room \(room.jid): account \(account) is not configured"))
                    }
                } else if accounts.count == 1 {
                    target = 0
                } else {
                    target = nil
                    problems.append(ConfigProblem(path: path, line: line,
                                                  message: "room \(room.jid): several accounts are configured; name one with `account = JID`"))
                }
                guard let target else { continue }
                accounts[target].rooms.removeAll { $0.jid == room.jid }
                accounts[target].rooms.append(room)
            }
        }

        private mutating func readAccount(written: String, group: String, values: [String: String], headerLine: Int?) {
            let jid: String
            do {
                jid = try ConfigValueParser.bareJID(written)
            } catch {
                problems.append(ConfigProblem(path: path, line: headerLine, message: error.message))
                return
            }
            var draft = AccountDraft()
            problems += apply(values, group: group, table: ConfigKeys.account, to: &draft)
            if accounts.contains(where: { $0.jid == jid }) {
                problems.append(ConfigProblem(path: path, line: headerLine, message: "account \(jid) is configured twice"))
                return
            }
            do {
                accounts.append(try draft.build(jid: jid))
            } catch {
                problems.append(ConfigProblem(path: path, line: headerLine, message: "account \(jid) \(error.message)"))
            }
        }

        /// Every key's unescaped value; keys GLib cannot decode are reported and left out.
        private mutating func rawValues(of group: String, from keyFile: KeyFile) -> [String: String] {
            var values: [String: String] = [:]
            for key in keyFile.keys(in: group) {
                do {
                    values[key] = try keyFile.string(group: group, key: key)
                } catch {
                    problems.append(problem(group: group, key: key,
                                            message: "invalid escape sequence; write a backslash as \\\\"))
                }
            }
            return values
        }

        /// Returns the problems instead of appending them: `draft` may be a property of `self`.
        private func apply<Draft>(
            _ values: [String: String], group: String, table: [String: ConfigKeySetter<Draft>], to draft: inout Draft
        ) -> [ConfigProblem] {
            var problems: [ConfigProblem] = []
            for (key, value) in values.sorted(by: { $0.key < $1.key }) {
                guard let setter = table[key] else {
                    let known = table.keys.sorted().joined(separator: ", ")
                    let meant = Suggestion.phrase(Suggestion.candidates(for: key, among: table.keys.sorted()))
                    problems.append(problem(group: group, key: key, message: "unknown key in [\(group)]\(meant); known keys: \(known)"))
                    continue
                }
                do {
                    try setter(&draft, value, paths)
                } catch {
                    problems.append(problem(group: group, key: key, message: error.message, resourceShortage: error.isResourceShortage))
                }
            }
            return problems
        }

        private func problem(group: String, key: String, message: String, resourceShortage: Bool = false) -> ConfigProblem {
            let line = index.keyLines[group]?[key] ?? index.groupLines[group]
            return ConfigProblem(path: path, line: line, key: key, message: message, resourceShortage: resourceShortage)
        }
    }
}
