/// Texts a client keeps instead of a message it could not decrypt, recognised per client so that such a message is
/// imported as undecryptable (no body; `e2e_failure` says why), never with the placeholder as its text.
///
/// Two kinds, each checked on the real programs (docs/import.md lists them):
/// - the client's own placeholder: Gajim 1.x writes "This message was encrypted with OMEMO and could not be
///   decrypted." for a message it has no plugin for (gajim/common/const.py `EME_MESSAGES`, the XEP-0380 name filled
///   in), and the Gajim OMEMO plugin 2.x "This message was encrypted with OMEMO, but not for your device."
///   (omemo/modules/omemo.py) when it has no key for it;
/// - the fallback body the sender's client put beside the encrypted payload, which a client without the keys (or
///   without OMEMO: Finch, poezio without its plugin, Profanity without `/omemo gen`) keeps as the text: slixmpp-omemo's
///   "This message is OMEMO encrypted." and nbxmpp's (Gajim) and Profanity's "You received a message encrypted with
///   OMEMO but your client doesn't support OMEMO."
///
/// Only these English texts are known; Gajim's translations of its placeholders are not.
enum EncryptedPlaceholder {
    struct Recognised: Equatable {
        /// `omemo`, `otr`, `openpgp`.
        var scheme: String
        /// Why there is no text, for `e2e_failure`.
        var failure: String
    }

    /// Fallback bodies of senders' OMEMO implementations, kept by any client.
    private static let fallbackBodies: [String: String] = [
        "This message is OMEMO encrypted.": "slixmpp-omemo",
        "You received a message encrypted with OMEMO but your client doesn't support OMEMO.": "Gajim (nbxmpp) or Profanity",
    ]

    /// What `text`, kept by `client`, stands for: nil when it is an ordinary message.
    static func recognise(_ text: String, client: ClientFormat) -> Recognised? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if let sender = fallbackBodies[trimmed] {
            return Recognised(scheme: "omemo", failure: "not decrypted by \(client.displayName), which kept the fallback text of the sender's "
                              + "client (\(sender)) instead")
        }
        guard client == .gajim else { return nil }
        if trimmed == "This message was encrypted with OMEMO, but not for your device." {
            return Recognised(scheme: "omemo", failure: "not encrypted for Gajim's device (Gajim's OMEMO plugin kept a placeholder)")
        }
        // gajim/common/const.py EME_MESSAGES: "This message was encrypted with %s and could not be decrypted." and the
        // longer OpenPGP texts that start alike.
        let prefix = "This message was encrypted with "
        guard trimmed.hasPrefix(prefix), let end = trimmed.range(of: " and could not be decrypted.") else { return nil }
        let name = String(trimmed[trimmed.index(trimmed.startIndex, offsetBy: prefix.count)..<end.lowerBound])
        let scheme = switch name.lowercased() {
        case "omemo": "omemo"
        case "otr": "otr"
        default: name.lowercased().contains("openpgp") ? "openpgp" : name.lowercased()
        }
        return Recognised(scheme: scheme, failure: "not decrypted by Gajim, which kept a placeholder (\(name))")
    }
}
