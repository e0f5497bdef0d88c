import Foundation
import Testing
import RoostTestSupport

/// contrib/systemd/roost.service is a user unit: what it says must mean something to a user manager, and what it
/// sandboxes must not break what the CLI hands the agent.
@Suite("The systemd user unit")
struct SystemdUnitTests {
    /// The unit's directives (`Key=value`, comments and section headers left out), in order.
    func directives() throws -> [(key: String, value: String)] {
        let text = try String(contentsOfFile: TestServer.packageRoot + "/contrib/systemd/roost.service", encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.hasPrefix("#"), !trimmed.hasPrefix("["), let equals = trimmed.firstIndex(of: "=") else { return nil }
            return (String(trimmed[..<equals]), String(trimmed[trimmed.index(after: equals)...]))
        }
    }

    /// A user manager has no network-online.target (nor network.target): `Wants=`/`After=` on them do nothing in a
    /// user unit, so the unit must not pretend to wait for the network (roost run retries by itself).
    @Test func namesNoSystemManagerTargets() throws {
        let units = try directives().filter { ["Wants", "Requires", "After", "Before", "BindsTo", "PartOf"].contains($0.key) }
        let systemOnly = ["network-online.target", "network.target", "nss-lookup.target", "time-sync.target", "multi-user.target"]
        for directive in units {
            for unit in directive.value.split(separator: " ") {
                #expect(!systemOnly.contains(String(unit)), "\(directive.key)=\(directive.value): \(unit) exists only in the system manager")
            }
        }
        #expect(try directives().contains { $0.key == "WantedBy" && $0.value == "default.target" }, "a user unit is wanted by default.target")
    }

    /// The sandbox the unit sets up, which `roost send --file` (reading the file in the CLI) and README count on.
    @Test func keepsItsSandbox() throws {
        let all = try directives()
        func value(_ key: String) -> String? { all.last { $0.key == key }?.value }
        #expect(value("PrivateTmp") == "yes")
        #expect(value("ProtectHome") == "read-only")
        #expect(value("Type") == "notify" && value("ExecStart")?.hasSuffix("roost run") == true)
    }
}
