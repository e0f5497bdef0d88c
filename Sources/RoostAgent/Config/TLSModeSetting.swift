/// How an account's connection gets encrypted, as written in the config (`tls = starttls|direct`).
///
/// Kept separate from the engine's own TLS type so the config contract does not move when the engine does.
public enum TLSModeSetting: String, Sendable, CaseIterable, Hashable {
    /// Plain TCP upgraded with STARTTLS (RFC 6120), usually port 5222.
    case starttls
    /// TLS from the first byte (XEP-0368), usually port 5223.
    case direct
}

/// When `roost send` encrypts (`omemo_send = auto|always|never`).
public enum OMEMOSendSetting: String, Sendable, CaseIterable, Hashable {
    /// Encrypt when the conversation is encrypted (its last message was); plaintext then needs `--plaintext`.
    case auto
    /// Always encrypt; a contact without OMEMO devices is an error.
    case always
    /// Never encrypt.
    case never
}
