/// XEP-0421 Anonymous unique occupant identifiers: a room's stable id for each occupant (the same for all
/// of one user's clients), which survives nick changes.
public enum OccupantID {
    /// The id on a stanza from a room. Only the room can set it (it strips any the sender put there), so it is
    /// meaningful only on stanzas that came from the room's own JID.
    public static func id(in element: Element) -> String? {
        let ids = element.children("occupant-id", namespace: Namespace.occupantID)
        guard ids.count == 1, let id = ids[0][attribute: "id"], !id.isEmpty else { return nil }
        return id
    }
}
