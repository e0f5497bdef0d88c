/// Channel-binding data taken from the TLS session, which ties a SCRAM-PLUS exchange to that session.
///
/// The TLS layer supplies only what is sound for the session: `tlsExporter` is the 32-byte export with
/// label "EXPORTER-Channel-Binding" and no context (RFC 9266), only on TLS 1.3; `tlsUnique` is the first
/// Finished message (RFC 5929 §3), only on TLS 1.2 with the extended master secret; `tlsServerEndPoint`
/// is the hash of the server certificate (RFC 5929 §4.1).
public enum ChannelBinding: Sendable, Equatable {
    case tlsExporter([UInt8])
    case tlsUnique([UInt8])
    case tlsServerEndPoint([UInt8])

    /// The registered channel-binding type name, as used in the GS2 header and in XEP-0440.
    public var typeName: String {
        switch self {
        case .tlsExporter: "tls-exporter"
        case .tlsUnique: "tls-unique"
        case .tlsServerEndPoint: "tls-server-end-point"
        }
    }

    public var data: [UInt8] {
        switch self {
        case .tlsExporter(let bytes), .tlsUnique(let bytes), .tlsServerEndPoint(let bytes): bytes
        }
    }
}
