import Foundation
import RoostAgent

/// `roost omemo`: Roost's OMEMO device: fingerprints and trust, and decrypting again what could not be.
struct OMEMOCommand: Command {
    static let name = "omemo"
    static let summary = "OMEMO encryption: fingerprints, trust, retry undecryptable messages"
    static let usage = "[options] fingerprints [JID] | trust JID FINGERPRINT | distrust JID FINGERPRINT | retry"
    static let discussion = """
        Roost is one of the account's OMEMO devices: it decrypts the encrypted messages sent to the account \
        (and those the user's other devices send) and archives them readable. \
        fingerprints lists Roost's own device, the account's other devices and, with JID, that contact's devices, \
        with their fingerprints (hex of the Curve25519 identity key) and trust: trusted (not verified) — blind \
        trust, the default until you verify one of the contact's devices —, verified, untrusted or distrusted. \
        trust marks a fingerprint verified (compare it with the one the contact's client shows; OMEMO 2 clients \
        may show the Ed25519 form, which is accepted too); from then on new devices of that contact are untrusted \
        until verified. distrust stops encrypting for that device and marks its messages untrusted. \
        retry decrypts again the messages archived as undecryptable (e.g. after a session was built). \
        Messages encrypted before Roost's device was published were not encrypted for it and can never be read here. \
        Goes through the running agent; when none runs, roost logs in once itself.
        """
    static let options: [OptionSpec] = []
    static let arguments: [ArgumentKind] = [.subcommands([Subcommand("fingerprints", [.contact]), Subcommand("trust", [.contact, .text]),
                                                          Subcommand("distrust", [.contact, .text]), Subcommand("retry")])]

    enum Action {
        case fingerprints(String?)
        case trust(String, String, Bool)
        case retry
    }

    let action: Action

    init(parsed: ParsedArguments) throws(UsageError) {
        let words = parsed.positionals
        switch words.first {
        case "fingerprints":
            guard words.count <= 2 else { throw UsageError("usage: roost omemo fingerprints [JID]", command: parsed.command) }
            action = .fingerprints(words.count == 2 ? words[1] : nil)
        case "trust", "distrust":
            guard words.count >= 3 else { throw UsageError("usage: roost omemo \(words[0]) JID FINGERPRINT", command: parsed.command) }
            // A fingerprint copied from a client often comes in groups separated by spaces.
            action = .trust(words[1], words[2...].joined(), words[0] == "trust")
        case "retry":
            guard words.count == 1 else { throw UsageError("usage: roost omemo retry", command: parsed.command) }
            action = .retry
        case nil:
            throw UsageError("missing subcommand (fingerprints, trust, distrust, retry)", command: parsed.command)
        case let other?:
            throw UsageError("unknown omemo subcommand '\(other)' (fingerprints, trust, distrust, retry)", command: parsed.command)
        }
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let link = try AgentLink(context: context, command: "roost omemo")
        let output = context.output
        switch action {
        case .fingerprints(let jid):
            let (devices, _) = try await link.perform(OMEMOFingerprintsAction(jid: try jid.map { try link.contact($0) }))
            for device in devices {
                if context.options.json {
                    output.jsonLine(["jid": .string(device.jid), "device": .int(Int(device.device)), "fingerprint": .string(device.fingerprint),
                                     "trust": .string(device.trust), "namespaces": .array(device.namespaces.map { .string($0) }),
                                     "own": .bool(device.own)])
                } else {
                    let fingerprint = device.fingerprint.map(Self.grouped) ?? "(fingerprint unknown)"
                    let trust = device.own ? "this device (Roost)" : Self.trustLabel(device.trust)
                    let lists = device.namespaces.isEmpty ? "not in the device list" : device.namespaces.joined(separator: ", ")
                    output.line("\(device.jid) device \(device.device)  \(fingerprint)  \(trust); \(lists)")
                }
            }
        case .trust(let jid, let fingerprint, let trust):
            let (done, _) = try await link.perform(OMEMOTrustAction(jid: try link.contact(jid), fingerprint: fingerprint, trust: trust))
            if context.options.json { output.jsonLine(["ok": true, "message": .string(done.message)]) } else { output.line(done.message) }
        case .retry:
            let (summary, _) = try await link.perform(OMEMORetryAction())
            if context.options.json {
                output.jsonLine(["tried": .int(summary.tried), "decrypted": .int(summary.decrypted)])
            } else {
                output.line("decrypted \(summary.decrypted) of \(summary.tried) undecryptable messages")
            }
        }
        return .ok
    }

    /// `8a5ee1da 698752cd …`: groups of eight, as clients show them.
    static func grouped(_ hex: String) -> String {
        stride(from: 0, to: hex.count, by: 8).map { i -> String in
            let start = hex.index(hex.startIndex, offsetBy: i)
            return String(hex[start..<hex.index(start, offsetBy: min(8, hex.count - i))])
        }.joined(separator: " ")
    }

    static func trustLabel(_ trust: String?) -> String {
        switch trust {
        case "blind": "trusted (not verified)"
        case "verified": "verified"
        case "untrusted": "untrusted"
        case "distrusted": "distrusted"
        default: "unknown"
        }
    }
}
