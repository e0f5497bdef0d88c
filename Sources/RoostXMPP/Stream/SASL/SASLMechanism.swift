/// One client-side SASL mechanism run (RFC 6120 §6). An instance serves a single authentication attempt.
///
/// All messages are raw bytes; base64 transport encoding is the stream negotiator's job.
public protocol SASLMechanism: AnyObject {
    /// The mechanism name sent in `<auth mechanism='…'>`, e.g. "SCRAM-SHA-256-PLUS".
    var name: String { get }
    /// The channel-binding type the exchange is bound with ("tls-exporter", …); nil when unbound.
    var channelBindingType: String? { get }
    /// The initial response sent with `<auth/>`.
    func initialResponse() throws(SASLError) -> [UInt8]
    /// The response to a `<challenge/>`.
    func respond(to challenge: [UInt8]) throws(SASLError) -> [UInt8]
    /// Called on `<success/>` with its additional data (nil when empty); throws unless the server has
    /// proven itself, which SCRAM requires either here or in a final challenge.
    func verifySuccess(_ additionalData: [UInt8]?) throws(SASLError)
}
