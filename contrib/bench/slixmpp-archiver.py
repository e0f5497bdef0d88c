#!/usr/bin/env python3
"""slixmpp-archiver.py: a short reference archiver, for contrib/bench/ingest.

What a straightforward Python client does to keep its history: on each received chat message, INSERT it
into an SQLite table and COMMIT, one transaction per message (--batch N commits every N messages instead,
and whatever is pending when the stream goes quiet for 0.2 s). Fair against Roost: WAL with
synchronous=FULL (Roost's live writer: an acknowledged message is on disk), a unique index for
deduplication, no full-text index (Roost also maintains FTS5, so this favours the reference). No stream
management, so no acks slow it down either.

When --count messages are stored (or nothing arrived for --idle seconds) it prints one JSON line:
{"client": "slixmpp-archiver", "stored": N, "seconds": S, "rate": N/S, "batch": B, "done_at": T, "cpu": C},
S from the first to the last commit, T the wall-clock time (epoch seconds) of the last commit, C the CPU
seconds this process spent from login to it.
"""
import argparse
import asyncio
import json
import sqlite3
import sys
import time

import slixmpp

SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY,
    stanza_id TEXT,
    message_id TEXT,
    sender TEXT NOT NULL,
    body TEXT,
    received_at REAL NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS messages_stanza_id ON messages(stanza_id);
"""


class Archiver(slixmpp.ClientXMPP):
    def __init__(self, args):
        super().__init__(args.jid, args.password)
        self.args = args
        self.db = sqlite3.connect(args.database, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(SCHEMA)
        self.register_plugin("xep_0359")
        self.pending = 0
        self.stored = 0
        self.first = None
        self.last = None
        self.last_wall = None  # time.time() of the last message (counted or committed), for contrib/bench/ingest
        self.cpu_online = self.cpu_last = 0.0  # process CPU seconds when online and at the last message
        self.done = asyncio.Event()
        self.ready = asyncio.Event()
        self.flush_handle = None
        self.add_event_handler("session_start", self.on_start)
        self.add_event_handler("message", self.on_message)

    async def on_start(self, _):
        self.send_presence()
        self.cpu_online = time.process_time()
        print(json.dumps({"event": "online"}), flush=True)
        self.ready.set()

    def on_message(self, msg):
        if not msg["id"].startswith(self.args.prefix + "-") or not msg["body"]:
            return
        stanza_id = msg["stanza_id"]["id"] or None
        if self.pending == 0:
            self.db.execute("BEGIN")
        self.db.execute("INSERT OR IGNORE INTO messages (stanza_id, message_id, sender, body, received_at) VALUES (?, ?, ?, ?, ?)",
                        (stanza_id, msg["id"], str(msg["from"]), msg["body"], time.time()))
        self.pending += 1
        if self.pending >= self.args.batch:
            self.commit()
        elif self.flush_handle is None:
            self.flush_handle = asyncio.get_event_loop().call_later(0.2, self.commit)

    def commit(self):
        if self.flush_handle is not None:
            self.flush_handle.cancel()
            self.flush_handle = None
        if self.pending == 0:
            return
        self.db.execute("COMMIT")
        now = time.monotonic()
        if self.first is None:
            self.first = now
        self.last = now
        self.last_wall = time.time()
        self.cpu_last = time.process_time()
        self.stored += self.pending
        self.pending = 0
        if self.stored >= self.args.count:
            self.done.set()


def parse_args():
    p = argparse.ArgumentParser(description="archive received messages into SQLite (reference for the benchmark)")
    p.add_argument("--jid", required=True)
    p.add_argument("--password", required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=5222)
    p.add_argument("--ca", help="CA certificate to trust")
    p.add_argument("--database", required=True)
    p.add_argument("--prefix", required=True, help="archive messages whose id is <prefix>-<n>")
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--batch", type=int, default=1, help="messages per transaction (default 1: commit each message)")
    p.add_argument("--idle", type=float, default=30, help="give up after this many seconds without a message")
    return p.parse_args()


async def main():
    args = parse_args()
    client = Archiver(args)
    client.ca_certs = args.ca or None
    client.connect((args.host, args.port), force_starttls=True)
    await asyncio.wait_for(client.ready.wait(), 30)
    seen = -1
    while not client.done.is_set():
        try:
            await asyncio.wait_for(client.done.wait(), args.idle)
        except asyncio.TimeoutError:
            if client.stored == seen:
                break
            seen = client.stored
    client.commit()
    seconds = (client.last - client.first) if client.first is not None else 0.0
    print(json.dumps({"client": "slixmpp-archiver", "stored": client.stored, "seconds": round(seconds, 3),
                      "rate": round(client.stored / seconds, 1) if seconds > 0 else 0, "batch": args.batch,
                      "done_at": client.last_wall, "cpu": round(client.cpu_last - client.cpu_online, 3)}), flush=True)
    client.disconnect()
    return 0 if client.stored >= args.count else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
