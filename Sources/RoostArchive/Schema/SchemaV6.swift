/// Schema version 6: group chats (XEP-0045).
///
/// # Rooms
/// `rooms` has one row per room an account knows of: from its bookmarks (XEP-0402 / XEP-0048: `bookmarked`,
/// `autojoin`, `name`, the bookmark's `nick`), from `roost rooms join` or an accepted invitation
/// (`joined_by_user`, rejoined at every start until `roost rooms leave`), or from the config. `nick` is the nick
/// Roost uses there (with the suffix it added after a nick conflict). A password is never stored here:
/// `password_source` says where it comes from, and for `roost rooms join --password-command` the row keeps the
/// command (a reference, not its output). `joined` is the agent's view; `catch_up_id` / `catch_up_timestamp` are
/// the room's archive mark (XEP-0313 on the room JID), moved only in the transaction that stores the page
/// carrying it, like the account's mark in `sync_state`. `mam` says whether the room advertises `urn:xmpp:mam:2`
/// (only then are its stanza-ids trusted), `non_anonymous` whether occupants' real JIDs are visible, and
/// `occupant_id` is Roost's own XEP-0421 id there (the same for all the user's clients).
///
/// # Occupants and the room presence timeline
/// `room_occupants` holds who is in each joined room now (cleared when Roost joins again). The timeline lives in
/// `presence_log` (contact = room JID, resource = nick) with `room_event` set: `join`, `leave`, `nick` (to
/// `new_nick`), `role`, `affiliation`, `kick`, `ban`, `destroyed`, plus the occupant's id, real JID, role and
/// affiliation. The occupants a room lists when Roost joins are not "joins" (they were there already).
///
/// # Messages
/// `occupant_id` and `real_jid` (bare) of group chat messages and MUC private messages. A room message's
/// stanza-id (`by` = the room) is trusted only when the room advertises MAM. Trusted stanza-ids are unique per
/// (account, `stanza_id_by`, stanza-id): ids assigned by different archives (the account's, each room's) never
/// suppress one another. A correction in a room edits a message only when both carry the same occupant id (or,
/// without occupant ids, the same nick).
///
/// # Invitations
/// `room_invitations`: direct (XEP-0249) and mediated (XEP-0045) invitations, `pending` until joined or
/// declined. `from_contact` records whether the inviter was in the roster: only such invitations may ever be
/// accepted automatically. `password` is the one the invitation itself carried (it arrived in a message).
/// `message_id` is the stanza id of the invitation's message: the same message seen again (live, as a carbon,
/// from the server archive) is the same invitation, even after it was answered.
enum SchemaV6 {
    static let sql = """
    CREATE TABLE rooms (
        id INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        jid TEXT NOT NULL COLLATE NOCASE,
        name TEXT,
        nick TEXT,
        bookmarked INTEGER NOT NULL DEFAULT 0,
        bookmark_nick TEXT,
        autojoin INTEGER NOT NULL DEFAULT 0,
        joined_by_user INTEGER NOT NULL DEFAULT 0,
        password_source TEXT CHECK (password_source IN ('bookmark', 'config', 'command', 'invitation')),
        password_command TEXT,
        joined INTEGER NOT NULL DEFAULT 0,
        joined_at INTEGER,
        left_at INTEGER,
        last_error TEXT,
        mam INTEGER,
        non_anonymous INTEGER,
        occupant_id TEXT,
        subject TEXT,
        subject_by TEXT,
        subject_at INTEGER,
        catch_up_id TEXT,
        catch_up_timestamp INTEGER,
        updated_at INTEGER NOT NULL,
        UNIQUE (account_id, jid)
    );

    CREATE TABLE room_occupants (
        id INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        room TEXT NOT NULL COLLATE NOCASE,
        nick TEXT NOT NULL,
        occupant_id TEXT,
        real_jid TEXT,
        role TEXT,
        affiliation TEXT,
        show TEXT,
        status TEXT,
        since INTEGER NOT NULL,
        UNIQUE (account_id, room, nick)
    );

    CREATE TABLE room_invitations (
        id INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        room TEXT NOT NULL COLLATE NOCASE,
        inviter TEXT,
        inviter_bare TEXT COLLATE NOCASE,
        kind TEXT NOT NULL CHECK (kind IN ('direct', 'mediated')),
        reason TEXT,
        password TEXT,
        from_contact INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL CHECK (status IN ('pending', 'accepted', 'declined')),
        message_id TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );
    CREATE INDEX room_invitations_room ON room_invitations(account_id, room, status);

    ALTER TABLE messages ADD COLUMN occupant_id TEXT;
    ALTER TABLE messages ADD COLUMN real_jid TEXT;

    ALTER TABLE presence_log ADD COLUMN room_event TEXT;
    ALTER TABLE presence_log ADD COLUMN occupant_id TEXT;
    ALTER TABLE presence_log ADD COLUMN real_jid TEXT;
    ALTER TABLE presence_log ADD COLUMN role TEXT;
    ALTER TABLE presence_log ADD COLUMN affiliation TEXT;
    ALTER TABLE presence_log ADD COLUMN new_nick TEXT;
    ALTER TABLE presence_log ADD COLUMN reason TEXT;

    UPDATE messages SET stanza_id_by = (SELECT jid FROM accounts WHERE accounts.id = messages.account_id)
        WHERE stanza_id_trusted = 1 AND stanza_id_by IS NULL;
    DROP INDEX messages_trusted_stanza_id;
    CREATE UNIQUE INDEX messages_trusted_stanza_id ON messages(account_id, stanza_id_by, stanza_id) WHERE stanza_id_trusted = 1;
    """
}
