import Foundation
public import RoostXMPP

/// Parses a contact's JID given on the command line or in a control request: strictly (`JIDSyntax`: a domain
/// of host-name labels, no controls), bare, never guessed from something close.
public enum JIDArgument {
    public static func bare(_ text: String) throws(ActionFailure) -> JID {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let jid: JID
        do { jid = try JID(trimmed) } catch {
            throw ActionFailure(.invalidArgument, "'\(text)' is not a valid JID: \(error)")
        }
        guard jid.localpart != nil || trimmed.contains(".") else {
            throw ActionFailure(.invalidArgument, "'\(text)' is not a contact's JID (expected name@server)")
        }
        guard jid.resource == nil else {
            throw ActionFailure(.invalidArgument, "'\(text)' names a resource (after /); give the contact's bare JID, name@server")
        }
        return jid
    }
}
