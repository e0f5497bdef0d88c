import RoostCore

/// `[general]` and `[archive]` values as they are read, before defaults apply.
struct SettingsDraft {
    var archivePath: String?
    var logLevel: LogLevel?
    var maxStanzaBytes: Int?
    var keepaliveSeconds: Int?
    var reconnectMaxSeconds: Int?
    var archivePollSeconds: Int?
    var maxSendBytes: Int?
    var archiveStallSeconds: Int?
    var roomPingSeconds: Int?
    var defaultAccount: String?
    var keepRetracted: Bool?
}
