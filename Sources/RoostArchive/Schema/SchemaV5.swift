/// Schema version 5: attachments become files Roost keeps.
///
/// # Attachments
/// Each row is one file shared with a message (XEP-0066 OOB, an upload link as the body, XEP-0447 stateless
/// file sharing, an `aesgcm://` link). Besides its URL it records what the sender advertised (XEP-0446 name,
/// media type, size, dimensions, description; XEP-0300 `hashes` as space-separated `algo=base64`), and what
/// Roost did about it:
/// - `state`: `pending` (to download), `stored` (in the file store), `too-large`, `failed:<reason>`,
///   `refused:<reason>` (see `AttachmentState`);
/// - `sha256`: lowercase hex of the stored bytes (the plaintext for `aesgcm://`), which names the file in the
///   content-addressed store beside the archive: `files/sha256/ab/cdef…` (see `FileStore`);
/// - `attempts` and `next_attempt_at` (UTC ms, NULL = not scheduled): the download worker's retry state, kept
///   here so backoff survives restarts.
/// Rows from before version 5 with a `local_path` (an imported path outside the store) count as stored.
enum SchemaV5 {
    static let sql = """
    ALTER TABLE attachments ADD COLUMN name TEXT;
    ALTER TABLE attachments ADD COLUMN description TEXT;
    ALTER TABLE attachments ADD COLUMN width INTEGER;
    ALTER TABLE attachments ADD COLUMN height INTEGER;
    ALTER TABLE attachments ADD COLUMN hashes TEXT;
    ALTER TABLE attachments ADD COLUMN sha256 TEXT;
    ALTER TABLE attachments ADD COLUMN state TEXT NOT NULL DEFAULT 'pending';
    ALTER TABLE attachments ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE attachments ADD COLUMN next_attempt_at INTEGER;
    ALTER TABLE attachments ADD COLUMN updated_at INTEGER;
    UPDATE attachments SET state = 'stored' WHERE local_path IS NOT NULL;
    CREATE INDEX attachments_state ON attachments(state, next_attempt_at);
    CREATE INDEX attachments_sha256 ON attachments(sha256) WHERE sha256 IS NOT NULL;
    """
}
