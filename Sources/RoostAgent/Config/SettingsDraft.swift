/// `[general]` and `[archive]` values as they are read, before defaults apply.
struct SettingsDraft {
    var archivePath: String?
    var logLevel: LogLevelSetting?
    var maxStanzaBytes: Int?
}
