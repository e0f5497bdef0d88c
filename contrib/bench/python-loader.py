#!/usr/bin/env python3
"""python-loader — the import baseline of contrib/bench/all: the straightforward loader a user would write.

    python-loader.py FILE.jsonl ARCHIVE.sqlite [--batch 5000]

Reads Roost's jsonl export line by line (json.loads), inserts each message into a plain table with the same
columns Roost fills and a unique index on the stanza-id, and its text into an FTS5 table (unicode61), in
transactions of --batch rows (WAL, synchronous=NORMAL). No dedup beyond the unique index, no corrections:
it does less than `roost import`, which is the point of a baseline.
"""
import json
import sqlite3
import sys


def main():
    args = sys.argv[1:]
    batch = 5000
    if "--batch" in args:
        i = args.index("--batch")
        batch = int(args[i + 1])
        del args[i:i + 2]
    source, path = args
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.executescript("""
        CREATE TABLE messages (id INTEGER PRIMARY KEY, account TEXT, conversation TEXT, direction TEXT, type TEXT,
            from_jid TEXT, to_jid TEXT, sender_name TEXT, body TEXT, timestamp TEXT, received_at TEXT,
            stanza_id TEXT, origin_id TEXT, message_id TEXT, replaces TEXT, source TEXT, raw TEXT);
        CREATE UNIQUE INDEX messages_stanza ON messages(account, stanza_id);
        CREATE INDEX messages_conversation ON messages(conversation);
        CREATE VIRTUAL TABLE message_fts USING fts5(body, sender_name, content='messages', content_rowid='id');
    """)
    columns = ("account", "conversation", "direction", "type", "from", "to", "sender_name", "body", "timestamp",
               "received_at", "stanza_id", "origin_id", "message_id", "replaces", "source", "raw")
    insert = ("INSERT OR IGNORE INTO messages (account, conversation, direction, type, from_jid, to_jid, sender_name, body,"
              " timestamp, received_at, stanza_id, origin_id, message_id, replaces, source, raw)"
              " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
    rows = []
    count = 0

    def flush():
        db.execute("BEGIN")
        first = db.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0]
        db.executemany(insert, rows)
        db.execute("INSERT INTO message_fts (rowid, body, sender_name) SELECT id, body, sender_name FROM messages WHERE id > ?",
                   (first,))
        db.execute("COMMIT")
        rows.clear()

    with open(source, encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if record.get("event") != "message":
                continue
            rows.append(tuple(record.get(c) for c in columns))
            count += 1
            if len(rows) >= batch:
                flush()
    if rows:
        flush()
    db.close()
    print(count)


if __name__ == "__main__":
    main()
