import Foundation
@testable import RoostAgent

/// Target `config`: the config file parser (`ConfigLoader`: GLib's key file reader, the line index, every
/// group's and key's checks, notification sinks).
///
/// Properties:
/// - any text is a config or a list of problems, never a crash;
/// - a secret is never repeated in an error: with an account whose `password` and a webhook whose `token` are
///   a marker appended to the text, no error message contains the marker;
/// - a file others may read, holding that password, is always refused.
enum ConfigFuzz {
    static let marker = "Fuzz-Secret-7f3a9c"

    static func check(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        let loader = ConfigLoader(environment: ["HOME": "/nonexistent-home"])
        let secrets = "\n[account fuzz@example.org]\npassword = \(marker)\n[sink fuzzhook]\ntype = webhook\nurl = https://example.org/hook\ntoken = \(marker)\n"
        for (body, mode) in [(text, UInt32(0o100600)), (text + secrets, UInt32(0o100600)), (text + secrets, UInt32(0o100644))] {
            do {
                _ = try loader.parse(ConfigFileContents(path: "/fuzz/config.ini", text: body, mode: mode))
                if mode & 0o077 != 0 { return "a shared file holding a password was accepted" }
            } catch {
                if error.description.contains(marker) { return "an error repeats a secret: \(error.description)" }
            }
        }
        return nil
    }
}
