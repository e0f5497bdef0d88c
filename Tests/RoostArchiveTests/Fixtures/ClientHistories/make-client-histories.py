#!/usr/bin/python3
"""make-client-histories.py OUT [--live FILE]: writes other clients' histories for Roost's import tests.

Independent of Roost: the databases are made by applying each client's schema (the *.sql files beside this
script, transcribed from the clients' sources) with Python's sqlite3 and filling them as the client would; the
log folders are written in the clients' formats. Alongside, OUT/manifest.json says what an importer must
find in each: every message (account, conversation, direction, type, nick, exact text, UTC milliseconds,
whether it was edited, whether its file is on disk, the reactions it must show: "EMOJI REACTOR", REACTOR the
reactor's JID in a chat, the nick in a room, "me" for the user's own, in the order they were made), the
refusals by reason, the entries that are not messages and the reactions' counts (added, waiting for their
message, already archived, refused by reason), computed here from the same data with Python's own time zone
rules.

With --live FILE (JSON lines of `roost search --json`: messages Roost stored from a real server), OUT/overlap
gets a Pidgin log folder and a Dino database that hold those messages as the clients would have stored them
(Pidgin: local time in whole seconds, no ids; Dino: whole seconds, the server's stanza-id) plus a few more;
the manifest's "overlap" entry lists only the additional ones.
"""

import argparse
import datetime as dt
import json
import os
import sqlite3
import sys
import uuid
import zoneinfo

HERE = os.path.dirname(os.path.abspath(__file__))
ME = "me@example.org"
ALICE = "alice@example.com"
WANG = "wang@example.cn"
ROOM = "lounge@conference.example.org"
UTC = dt.timezone.utc
BERLIN = zoneinfo.ZoneInfo("Europe/Berlin")
TOKYO = zoneinfo.ZoneInfo("Asia/Tokyo")
NEW_YORK = zoneinfo.ZoneInfo("America/New_York")


EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)


def ms(t):
    """UTC milliseconds, the fraction below a millisecond cut off (exact: no float arithmetic)."""
    return (t - EPOCH) // dt.timedelta(milliseconds=1)


def at(*args):
    return dt.datetime(*args, tzinfo=UTC)


# The history every client format carries (in its own way): (UTC time, conversation, type, direction, nick, text).
T0 = at(2023, 3, 10, 9, 0, 0)
T1 = at(2023, 11, 4, 22, 58, 30)   # 23:58:30 in Berlin (CET): a session that crosses local midnight
BASE = [
    (T0, ALICE, "chat", "in", None, "Hello from the old client 👋"),
    (T0 + dt.timedelta(seconds=40), ALICE, "chat", "out", None, "Hi Alice! How are you?"),
    (T0 + dt.timedelta(seconds=95), WANG, "chat", "in", None, "你好，我们明天见面吧"),
    (T0 + dt.timedelta(seconds=130), WANG, "chat", "out", None, "好的，明天下午三点见！"),
    (T0 + dt.timedelta(seconds=200), ALICE, "chat", "in", None, "こんにちは、세계 — mixed 日本語 and 한국어"),
    (T0 + dt.timedelta(seconds=260), ALICE, "chat", "out", None, "<b>not bold</b> & \"quotes\" 'single'"),
    (T0 + dt.timedelta(seconds=300), ALICE, "chat", "in", None, "first line\nsecond line"),
    (T1, ALICE, "chat", "in", None, "almost midnight in Berlin"),
    (T1 + dt.timedelta(seconds=150), ALICE, "chat", "out", None, "already tomorrow 🌙"),
    (at(2024, 1, 20, 14, 0, 5), ROOM, "groupchat", "in", "alice", "Morning all ☕"),
    (at(2024, 1, 20, 14, 0, 25), ROOM, "groupchat", "in", "王伟", "早上好，大家"),
    (at(2024, 1, 20, 14, 1, 0), ROOM, "groupchat", "in", "bob", "/me waves"),
]
# A correction (first text, corrected text) and a file, for the formats that keep them.
CORRECTION = (T0 + dt.timedelta(seconds=400), ALICE, "out", "Lets meet at 5", "Let's meet at 5pm", T0 + dt.timedelta(seconds=430))
FILE = (T0 + dt.timedelta(seconds=500), ALICE, "in", "https://upload.example.com/3f2a9c/photo.jpg")


def sid(conversation, text):
    """The server archive's stanza-id of a message: the same in every client's copy, as in real life."""
    import hashlib
    return "sid-" + hashlib.sha1(("%s|%s" % (conversation, text)).encode()).hexdigest()[:16]


def mid(conversation, text):
    """The message id (and origin-id) the sending client gave it."""
    import hashlib
    return "mid-" + hashlib.sha1(("%s|%s|id" % (conversation, text)).encode()).hexdigest()[:16]


def expected(t, conversation, kind, direction, nick, text, edited=False, file=False, precision="ms"):
    """One message an importer must store; `edited` is the first text of a corrected one (its body is the last)."""
    stamp = ms(t)
    if precision == "s":
        stamp = stamp // 1000 * 1000
    return {"account": ME, "conversation": conversation, "direction": direction, "type": kind, "nick": nick,
            "body": text, "timestamp": stamp, "edited": bool(edited), "first": edited or None, "file": file, "reactions": []}


def react(result, conversation, body, reactions):
    """The reactions ("EMOJI REACTOR", in order) the message with this body must show after the import."""
    for message in result["messages"]:
        if message["conversation"] == conversation and message["body"] == body:
            message["reactions"] = reactions
            return
    raise KeyError("no message %r in %s" % (body, conversation))


def reaction_counts(added=0, waiting=0, duplicates=0, refused=None):
    return {"added": added, "waiting": waiting, "duplicates": duplicates, "refused": refused or {}}


def apply_schema(path, schema):
    if os.path.exists(path):
        os.remove(path)
    con = sqlite3.connect(path)
    with open(os.path.join(HERE, schema), encoding="utf-8") as f:
        con.executescript(f.read())
    return con


def write_download(folder, url, data=b"\x89PNG fake image bytes"):
    """A file Gajim downloaded: downloads/STEM_SHA1(URL)EXT."""
    import hashlib
    os.makedirs(folder, exist_ok=True)
    name = os.path.basename(url)
    stem, ext = os.path.splitext(name)
    path = os.path.join(folder, "%s_%s%s" % (stem, hashlib.sha1(url.encode()).hexdigest(), ext))
    with open(path, "wb") as f:
        f.write(data)
    return path


# ---------------------------------------------------------------- Gajim

def gajim_legacy(out, schema):
    folder = os.path.join(out, "gajim-%s" % schema.split("-")[1].replace(".sql", ""))
    os.makedirs(folder, exist_ok=True)
    con = apply_schema(os.path.join(folder, "logs.db"), schema)
    old = schema == "gajim-0.16.sql"
    jids = {}

    def jid(j, room=False):
        if j not in jids:
            cur = con.execute("INSERT INTO jids (jid, type) VALUES (?, ?)", (j, 1 if room else 0))
            jids[j] = cur.lastrowid
        return jids[j]

    kinds = {("chat", "in"): 4, ("chat", "out"): 6, ("groupchat", "in"): 2}
    account = None if old else jid(ME)
    result = {"messages": [], "refused": {}, "not_messages": {}, "files": 0}
    for t, conv, kind, direction, nick, text in BASE:
        seconds = int(t.timestamp()) if old else t.timestamp() + 0.123
        row = {"jid_id": jid(conv, kind == "groupchat"), "contact_name": nick, "time": seconds,
               "kind": kinds[(kind, direction)], "message": text}
        if not old:
            row.update(account_id=account, message_id=mid(conv, text),
                       stanza_id=sid(conv, text) if direction == "in" else None)
            if direction == "out":
                row["stanza_id"] = row["message_id"]  # Gajim's own id, not the server's
        cols = ", ".join(row)
        con.execute("INSERT INTO logs (%s) VALUES (%s)" % (cols, ", ".join("?" * len(row))), tuple(row.values()))
        result["messages"].append(dict(expected(t, conv, kind, direction, nick, text), timestamp=int(round(seconds * 1000))))
    # A status change and an error: not messages. An empty message: refused.
    con.execute("INSERT INTO logs (jid_id, time, kind, show, message) VALUES (?, ?, 0, 2, 'away')", (jid(ALICE), T0.timestamp()))
    con.execute("INSERT INTO logs (jid_id, time, kind, message) VALUES (?, ?, 7, 'service unavailable')", (jid(ALICE), T0.timestamp()))
    con.execute("INSERT INTO logs (jid_id, time, kind, message) VALUES (?, ?, 4, '')", (jid(ALICE), T0.timestamp()))
    result["not_messages"] = {"status changes": 1, "error notices": 1}
    result["refused"] = {"empty message": 1}
    if not old:
        # Gajim 1.x corrected in place, keeping the first text; and a link whose preview was downloaded.
        t, conv, direction, first, second, _ = CORRECTION
        extra = json.dumps({"corrected": {"original_text": first}})
        con.execute("INSERT INTO logs (account_id, jid_id, time, kind, message, additional_data, message_id, stanza_id) "
                    "VALUES (?, ?, ?, 6, ?, ?, ?, ?)", (account, jid(conv), t.timestamp(), second, extra, mid(conv, first), mid(conv, first)))
        result["messages"].append(expected(t, conv, "chat", direction, None, second, edited=first))
        t, conv, direction, url = FILE
        extra = json.dumps({"gajim": {"oob_url": url}})
        con.execute("INSERT INTO logs (account_id, jid_id, time, kind, message, additional_data, stanza_id) "
                    "VALUES (?, ?, ?, 4, ?, ?, ?)", (account, jid(conv), t.timestamp(), url, extra, sid(conv, url)))
        write_download(os.path.join(folder, "downloads"), url)
        result["messages"].append(expected(t, conv, "chat", direction, None, url, file=True))
        result["files"] = 1
    con.commit()
    con.close()
    return folder, result


def gajim_current(out):
    folder = os.path.join(out, "gajim-2")
    os.makedirs(folder, exist_ok=True)
    con = apply_schema(os.path.join(folder, "logs.db"), "gajim-2.sql")
    con.execute("INSERT INTO account (jid) VALUES (?)", (ME,))
    remotes = {}

    def remote(j):
        if j not in remotes:
            remotes[j] = con.execute("INSERT INTO remote (jid) VALUES (?)", (j,)).lastrowid
        return remotes[j]

    occupants = {}

    def occupant(nick):
        # The room's XEP-0421 id of the occupant: the same one Dino saw (occupant_id()).
        if nick not in occupants:
            occupants[nick] = con.execute(
                "INSERT INTO occupant (fk_account_pk, fk_remote_pk, id, nickname, updated_at) VALUES (1, ?, ?, ?, ?)",
                (remote(ROOM), occupant_id(nick), nick, T0.timestamp())).lastrowid
        return occupants[nick]

    result = {"messages": [], "refused": {}, "not_messages": {}, "files": 0}

    def message(t, conv, kind, direction, nick, text, correction_id=None, resource=None, mid=None, sid=None):
        typ = {"chat": 1, "groupchat": 2}[kind]
        cur = con.execute(
            "INSERT INTO message (fk_account_pk, fk_remote_pk, resource, type, direction, timestamp, state, id, stanza_id, text, "
            "fk_occupant_pk, correction_id) VALUES (1, ?, ?, ?, ?, ?, 2, ?, ?, ?, ?, ?)",
            (remote(conv), nick if kind == "groupchat" else resource, typ, 1 if direction == "in" else 2, t.timestamp(),
             mid or str(uuid.uuid4()), sid, text, occupant(nick) if kind == "groupchat" else None, correction_id))
        return cur.lastrowid

    for t, conv, kind, direction, nick, text in BASE:
        message(t, conv, kind, direction, nick, text, resource="phone" if direction == "in" else None,
                mid=mid(conv, text), sid=sid(conv, text) if direction == "in" else None)
        result["messages"].append(expected(t, conv, kind, direction, nick, text))
    # A correction: a row of its own naming the corrected message.
    t, conv, direction, first, second, t2 = CORRECTION
    message(t, conv, "chat", direction, None, first, mid=mid(conv, first))
    message(t2, conv, "chat", direction, None, second, mid=mid(conv, second), correction_id=mid(conv, first))
    result["messages"].append(expected(t, conv, "chat", direction, None, second, edited=first))
    # A link with its downloaded preview.
    t, conv, direction, url = FILE
    pk = message(t, conv, "chat", direction, None, url, mid=mid(conv, url), sid=sid(conv, url))
    con.execute("INSERT INTO oob (fk_message_pk, url) VALUES (?, ?)", (pk, url))
    write_download(os.path.join(folder, "downloads"), url)
    result["messages"].append(expected(t, conv, "chat", direction, None, url, file=True))
    result["files"] = 1
    # Taken back by its sender, and removed by a moderator: refused.
    message(T0 + dt.timedelta(seconds=600), ALICE, "chat", "in", None, "oops, wrong chat", mid="retracted-1")
    con.execute("INSERT INTO retraction (fk_account_pk, fk_remote_pk, id, direction, timestamp, state) VALUES (1, ?, 'retracted-1', 1, ?, 0)",
                (remote(ALICE), T0.timestamp() + 610))
    message(at(2024, 1, 20, 14, 5, 0), ROOM, "groupchat", "in", "spammer", "buy cheap watches", sid="room-sid-9")
    con.execute("INSERT INTO moderation (fk_account_pk, fk_remote_pk, stanza_id, timestamp) VALUES (1, ?, 'room-sid-9', ?)",
                (remote(ROOM), at(2024, 1, 20, 14, 6).timestamp()))
    result["refused"] = {"retracted by its sender": 1, "retracted by a moderator": 1}

    # Reactions (gajim/common/modules/reactions.py): one row per reactor and message, the id the reaction named (the
    # message id in a chat, the room's stanza-id in a room), direction 2 for the user's own, emojis joined by ";".
    def reaction(conv, target, direction, emojis, t, nick=None):
        con.execute("INSERT INTO reaction (fk_account_pk, fk_remote_pk, fk_occupant_pk, id, direction, emojis, timestamp) "
                    "VALUES (1, ?, ?, ?, ?, ?, ?)", (remote(conv), occupant(nick) if nick else None, target, direction, emojis,
                                                     t.timestamp() + 0.25))

    hi, ni_hao, morning, zao = (BASE[1][5], BASE[2][5], BASE[9][5], BASE[10][5])
    reaction(ALICE, mid(ALICE, hi), 1, "👍", T0 + dt.timedelta(seconds=45))
    react(result, ALICE, hi, ["👍 " + ALICE])
    reaction(WANG, mid(WANG, ni_hao), 2, "🎉;❤️", T0 + dt.timedelta(seconds=100))
    react(result, WANG, ni_hao, ["🎉 me", "❤️ me"])
    reaction(ROOM, sid(ROOM, morning), 1, "🍵", at(2024, 1, 20, 14, 0, 40), nick="王伟")
    react(result, ROOM, morning, ["🍵 王伟"])
    reaction(ROOM, sid(ROOM, zao), 2, "😂", at(2024, 1, 20, 14, 0, 50), nick="menick")
    react(result, ROOM, zao, ["😂 me"])
    # Gajim keeps reactions to messages it does not have (older than its history): kept, waiting for the message.
    reaction(ALICE, "not-in-this-history", 1, "👀", T0 + dt.timedelta(seconds=50))
    result["reactions"] = reaction_counts(added=5, waiting=1)
    con.commit()
    con.close()
    return folder, result


def occupant_id(nick):
    """The XEP-0421 id the test room gives an occupant."""
    import hashlib
    return "occ-" + hashlib.sha1(nick.encode()).hexdigest()[:12]


# ---------------------------------------------------------------- Dino

def dino(out, schema, folder_name=None, live=None):
    version = int(schema.split("-")[1].replace(".sql", ""))
    folder = os.path.join(out, folder_name or "dino-%d" % version)
    os.makedirs(folder, exist_ok=True)
    con = apply_schema(os.path.join(folder, "dino.db"), schema)
    con.execute("INSERT INTO account (bare_jid, resourcepart, enabled) VALUES (?, 'dino', 1)", (ME,))
    jids = {}

    def jid(j):
        if j not in jids:
            jids[j] = con.execute("INSERT INTO jid (bare_jid) VALUES (?)", (j,)).lastrowid
        return jids[j]

    result = {"messages": [], "refused": {}, "not_messages": {}, "files": 0}
    conversations = {}

    def conversation(conv, typ):
        """Dino's conversation row (type 0 chat, 1 room): its content items belong to it."""
        if conv not in conversations:
            conversations[conv] = con.execute("INSERT INTO conversation (account_id, jid_id, active, type) VALUES (1, ?, 1, ?)",
                                              (jid(conv), 1 if typ == 2 else 0)).lastrowid
        return conversations[conv]

    def item(conv, typ, content_type, foreign_id, seconds):
        """The content item Dino shows (content_type 1 message, 2 file transfer, 3 call): what reactions name."""
        return con.execute("INSERT INTO content_item (conversation_id, time, local_time, content_type, foreign_id) VALUES (?, ?, ?, ?, ?)",
                           (conversation(conv, typ), seconds, seconds + 1, content_type, foreign_id)).lastrowid

    items = {}

    def message(t, conv, kind, direction, nick, text, stanza_id=None, server_id=None, typ=None, shown=True):
        typ = typ if typ is not None else {"chat": 1, "groupchat": 2}[kind]
        seconds = int(t.timestamp())
        counterpart_resource = nick if kind == "groupchat" and direction == "in" else ("laptop" if direction == "in" else None)
        our_resource = "menick" if kind == "groupchat" and direction == "out" else "dino"
        row = con.execute(
            "INSERT INTO message (stanza_id, server_id, account_id, counterpart_id, our_resource, counterpart_resource, direction, "
            "type, time, local_time, body, encryption, marked) VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, 0, 2)",
            (stanza_id or str(uuid.uuid4()), server_id, jid(conv), our_resource, counterpart_resource,
             1 if direction == "out" else 0, typ, seconds, seconds + 1, text)).lastrowid
        if shown and typ != 0:
            items[(conv, text)] = item(conv, typ, 1, row, seconds)
        return row

    if live is not None:
        account = live[0]["account"]
        shared = 0
        for row in live:
            t = dt.datetime.fromisoformat(row["timestamp"].replace("Z", "+00:00"))
            message(t, row["conversation"], "chat", row["direction"], None, row["body"],
                    stanza_id=row.get("message_id"), server_id=row.get("stanza_id"))
            # The reactions Roost received, as Dino received them too (its own clock: when the test reacted).
            sets = {}
            for r in row.get("current_reactions") or []:
                sets.setdefault(account if r["own"] else row["conversation"], []).append(r["emoji"])
            for reactor, emojis in sets.items():
                reacted = dt.datetime.fromisoformat(row["reacted_at"].replace("Z", "+00:00"))
                dino_reaction(con, jid, items[(row["conversation"], row["body"])], reacted, ",".join(emojis), reactor=reactor)
                shared += 1
        extras = [(at(2021, 6, 1, 12, 0, 0), "only in Dino's history", "in"), (at(2021, 6, 1, 12, 0, 9), "還有一條只在 Dino 裡", "out")]
        peer = live[0]["conversation"]
        for t, text, direction in extras:
            message(t, peer, "chat", direction, None, text)
            result["messages"].append(dict(expected(t, peer, "chat", direction, None, text, precision="s"), account=account))
        # And one reaction Roost never saw: the user's, to a message only Dino has.
        dino_reaction(con, jid, items[(peer, extras[0][1])], extras[0][0] + dt.timedelta(seconds=30), "👍", reactor=account)
        react(result, peer, extras[0][1], ["👍 me"])
        result["reactions"] = reaction_counts(added=1, duplicates=shared)
        con.execute("UPDATE account SET bare_jid = ?", (account,))
        con.commit()
        return folder, result

    for t, conv, kind, direction, nick, text in BASE:
        message(t, conv, kind, direction, nick, text, stanza_id=mid(conv, text), server_id=sid(conv, text) if direction == "in" else None)
        result["messages"].append(expected(t, conv, kind, direction, nick, text, precision="s"))
    # Own group chat message: Dino keeps the own nick as our_resource.
    t = at(2024, 1, 20, 14, 1, 30)
    message(t, ROOM, "groupchat", "out", "menick", "morning!", server_id="room-own-1")
    result["messages"].append(expected(t, ROOM, "groupchat", "out", "menick", "morning!", precision="s"))
    # An HTTP upload: the message carries the link, file_transfer.info names its row, the file is in files/.
    t, conv, direction, url = FILE
    row = message(t, conv, "chat", direction, None, url, stanza_id=mid(conv, url), server_id=sid(conv, url), shown=False)
    os.makedirs(os.path.join(folder, "files"), exist_ok=True)
    with open(os.path.join(folder, "files", "photo-3f2a9c.jpg"), "wb") as f:
        f.write(b"\xff\xd8 fake jpeg")
    transfer = con.execute(
        "INSERT INTO file_transfer (account_id, counterpart_id, counterpart_resource, direction, time, local_time, file_name, "
        "path, mime_type, size, state, provider, info) VALUES (1, ?, 'laptop', 0, ?, ?, 'photo.jpg', 'photo-3f2a9c.jpg', "
        "'image/jpeg', 11, 2, 0, ?)", (jid(conv), int(t.timestamp()), int(t.timestamp()), str(row))).lastrowid
    # Dino shows the upload as a file item, not as a message.
    items[(conv, url)] = item(conv, 1, 2, transfer, int(t.timestamp()))
    result["messages"].append(expected(t, conv, "chat", direction, None, url, file=True, precision="s"))
    result["files"] = 1
    # An error message: not a message; an empty body: refused.
    message(T0, ALICE, "chat", "in", None, "remote-server-not-found", typ=0)
    message(T0 + dt.timedelta(seconds=2), ALICE, "chat", "in", None, None, stanza_id="empty-1")
    result["not_messages"] = {"error messages": 1}
    result["refused"] = {"empty message": 1}
    if version >= 17:
        # A correction: its own message row, linked by message_correction.
        t, conv, direction, first, second, t2 = CORRECTION
        message(t, conv, "chat", direction, None, first, stanza_id=mid(conv, first))
        fix = message(t2, conv, "chat", direction, None, second, stanza_id=mid(conv, second), shown=False)
        con.execute("INSERT INTO message_correction (message_id, to_stanza_id) VALUES (?, ?)", (fix, mid(conv, first)))
        # The corrected message's item now names its newest correction (message_correction.vala, set_correction).
        con.execute("UPDATE content_item SET foreign_id = ? WHERE id = ?", (fix, items[(conv, first)]))
        result["messages"].append(expected(t, conv, "chat", direction, None, second, edited=first, precision="s"))
        # A file sent over Jingle: no message, only the transfer.
        t = T0 + dt.timedelta(seconds=700)
        with open(os.path.join(folder, "files", "notes.pdf"), "wb") as f:
            f.write(b"%PDF-1.4 fake")
        con.execute("INSERT INTO file_transfer (account_id, counterpart_id, direction, time, local_time, file_name, path, mime_type, "
                    "size, state, provider) VALUES (1, ?, 1, ?, ?, 'notes.pdf', 'notes.pdf', 'application/pdf', 13, 2, 1)",
                    (jid(WANG), int(t.timestamp()), int(t.timestamp())))
        result["messages"].append(expected(t, WANG, "chat", "out", None, "notes.pdf", file=True, precision="s"))
        result["files"] += 1
    if version >= 25:
        call = con.execute("INSERT INTO call (account_id, counterpart_id, direction, time, local_time, end_time, state) "
                           "VALUES (1, ?, 0, ?, ?, ?, 3)", (jid(ALICE), int(T0.timestamp()) + 900, int(T0.timestamp()) + 900,
                                                            int(T0.timestamp()) + 960)).lastrowid
        items[(ALICE, "call")] = item(ALICE, 1, 3, call, int(T0.timestamp()) + 900)
        result["not_messages"].update({"calls": 1})
        dino_reactions(con, jid, items, result)
    con.commit()
    con.close()
    return folder, result


def dino_reaction(con, jid, item_id, t, emojis, reactor=None, nick=None):
    """A reaction as libdino/src/service/reactions.vala stores it: one row per reactor and content item (a new set
    replaces the old: UNIQUE … ON CONFLICT REPLACE), time in UTC milliseconds, emojis joined by ",", the reactor's
    bare JID in a chat (the account's for the user's own), its occupant_id row in a room (occupant_id_store.vala:
    the occupant's XEP-0421 id, last nick, the room's jid_id)."""
    occupant = None
    if nick:
        row = con.execute("SELECT id FROM occupant_id WHERE occupant_id = ?", (occupant_id(nick),)).fetchone()
        occupant = row[0] if row else con.execute(
            "INSERT INTO occupant_id (account_id, last_nick, jid_id, occupant_id) VALUES (1, ?, ?, ?)",
            (nick, jid(ROOM), occupant_id(nick))).lastrowid
    con.execute("INSERT INTO reaction (account_id, occupant_id, content_item_id, time, jid_id, emojis) VALUES (1, ?, ?, ?, ?, ?)",
                (occupant, item_id, ms(t), jid(reactor) if reactor else None, emojis))


def dino_reactions(con, jid, items, result):
    """The reactions of the Dino fixture."""
    def reaction(item_id, t, emojis, reactor=None, nick=None):
        dino_reaction(con, jid, item_id, t, emojis, reactor, nick)

    hi, ni_hao, hao_de, konnichiwa = BASE[1][5], BASE[2][5], BASE[3][5], BASE[4][5]
    morning, zao = BASE[9][5], BASE[10][5]
    # Several emojis at once: Alice's set, newer than the one she made in Gajim, which it replaces.
    reaction(items[(ALICE, hi)], T0 + dt.timedelta(seconds=60, milliseconds=300), "👍,❤️", reactor=ALICE)
    react(result, ALICE, hi, ["👍 " + ALICE, "❤️ " + ALICE])
    # The user's own set, the same as Gajim's (a second client's copy of one reaction).
    reaction(items[(WANG, ni_hao)], T0 + dt.timedelta(seconds=101), "🎉,❤️", reactor=ME)
    react(result, WANG, ni_hao, ["🎉 me", "❤️ me"])
    # Replaced in Dino itself: only the second set is left.
    reaction(items[(WANG, hao_de)], T0 + dt.timedelta(seconds=140), "😀", reactor=WANG)
    reaction(items[(WANG, hao_de)], T0 + dt.timedelta(seconds=150), "🙏,👍🏽", reactor=WANG)
    react(result, WANG, hao_de, ["🙏 " + WANG, "👍🏽 " + WANG])
    # A room: an occupant (by its occupant id, with its nick) and the user (the own nick, no real JID kept).
    reaction(items[(ROOM, morning)], at(2024, 1, 20, 14, 0, 41), "🍵", nick="王伟")
    react(result, ROOM, morning, ["🍵 王伟"])
    reaction(items[(ROOM, zao)], at(2024, 1, 20, 14, 0, 50), "😂", nick="menick")
    react(result, ROOM, zao, ["😂 me"])
    # The corrected message (its item names the correction) and the uploaded file (a file item).
    t, conv, direction, first, second, t2 = CORRECTION
    reaction(items[(conv, first)], t2 + dt.timedelta(seconds=20), "👌", reactor=ALICE)
    react(result, conv, second, ["👌 " + ALICE])
    t, conv, direction, url = FILE
    reaction(items[(conv, url)], t + dt.timedelta(seconds=30), "📷", reactor=ME)
    react(result, conv, url, ["📷 me"])
    # All taken back: nothing to take back in the archive either (counted as already archived).
    reaction(items[(ALICE, konnichiwa)], T0 + dt.timedelta(seconds=250), "", reactor=ALICE)
    # To the message with no text that is refused: kept, waiting for the message.
    reaction(items[(ALICE, None)], T0 + dt.timedelta(seconds=5), "❓", reactor=ALICE)
    # To a call, and to an item Dino no longer has: refused.
    reaction(items[(ALICE, "call")], T0 + dt.timedelta(seconds=990), "📞", reactor=ALICE)
    reaction(9999, T0 + dt.timedelta(seconds=995), "👻", reactor=ALICE)
    result["reactions"] = reaction_counts(added=8, waiting=1, duplicates=1, refused={
        "a reaction to a call": 1, "the reacted message is no longer in Dino's database": 1})


# ---------------------------------------------------------------- Profanity

def iso(t, zone, micro=True):
    """GLib's g_date_time_format_iso8601: local time, microseconds when non-zero, +HH:MM (Z for UTC)."""
    local = t.astimezone(zone)
    text = local.strftime("%Y-%m-%dT%H:%M:%S")
    if micro and local.microsecond:
        text += ".%06d" % local.microsecond
    offset = local.utcoffset()
    if offset == dt.timedelta(0):
        return text + "Z"
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    return text + "%s%02d:%02d" % (sign, abs(minutes) // 60, abs(minutes) % 60)


def profanity(out, schema, old_logs):
    folder = os.path.join(out, "profanity-old" if old_logs else "profanity")
    account_dir = ME.replace("@", "_at_")
    db_dir = os.path.join(folder, "database", account_dir)
    os.makedirs(db_dir, exist_ok=True)
    con = apply_schema(os.path.join(db_dir, "chatlog.db"), schema)
    v1 = schema == "profanity-0.10.sql"
    result = {"messages": [], "refused": {}, "not_messages": {}, "files": 0}
    zones = [BERLIN, TOKYO, NEW_YORK]
    for i, (t, conv, kind, direction, nick, text) in enumerate(BASE):
        t = t + dt.timedelta(microseconds=250500)
        typ = "muc" if kind == "groupchat" else "chat"
        if direction == "out":
            frm, frm_res, to, to_res = ME, "profanity", conv, ""
        else:
            frm, frm_res, to, to_res = conv, nick if kind == "groupchat" else "phone", ME, ""
        con.execute("INSERT INTO ChatLogs (from_jid, from_resource, to_jid, to_resource, message, timestamp, type, stanza_id, "
                    "archive_id, encryption) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'none')",
                    (frm, frm_res, to, to_res if not v1 else "", text, iso(t, zones[i % 3]), typ, mid(conv, text),
                     sid(conv, text) if direction == "in" else ("" if v1 else None)))
        result["messages"].append(expected(t, conv, kind, direction, nick, text))
    # A correction: Profanity's own message, then the correcting one naming it by replace_id.
    t, conv, direction, first, second, t2 = CORRECTION
    con.execute("INSERT INTO ChatLogs (from_jid, to_jid, message, timestamp, type, stanza_id) VALUES (?, ?, ?, ?, 'chat', ?)",
                (ME, conv, first, iso(t, BERLIN), mid(conv, first)))
    con.execute("INSERT INTO ChatLogs (from_jid, to_jid, message, timestamp, type, stanza_id, replace_id) "
                "VALUES (?, ?, ?, ?, 'chat', ?, ?)", (ME, conv, second, iso(t2, BERLIN), mid(conv, second), mid(conv, first)))
    result["messages"].append(expected(t, conv, "chat", direction, None, second, edited=first))
    # "/dblog redact" kept no text; a row without a time: refused.
    con.execute("INSERT INTO ChatLogs (from_jid, to_jid, message, timestamp, type) VALUES (?, ?, '[REDACTED]', ?, 'chat')",
                (ALICE, ME, iso(T0, BERLIN)))
    con.execute("INSERT INTO ChatLogs (from_jid, to_jid, message, timestamp, type) VALUES (?, ?, 'no time', ?, 'chat')",
                (ALICE, ME, "" if v1 else None))
    result["refused"] = {"text not kept (Profanity's redact setting)": 1, "no readable time": 1}
    con.commit()
    con.close()

    # Plain-text logs of other days (so they add to the database's messages).
    logs = os.path.join(folder, "chatlogs", account_dir)
    zone = TOKYO
    text_events = [
        (at(2022, 5, 1, 3, 0, 1), ALICE, "chat", "in", None, "text log: hello 👋"),
        (at(2022, 5, 1, 3, 0, 30), ALICE, "chat", "out", None, "text log: multi\nline reply"),
        (at(2022, 5, 1, 3, 1, 0), ALICE, "chat", "out", None, "/me nods"),
        (at(2022, 5, 1, 4, 0, 0), ROOM, "groupchat", "in", "王伟", "群聊：大家好"),
        (at(2022, 5, 1, 4, 0, 20), ROOM, "groupchat", "in", "me-nick", "hi room"),
    ]
    for t, conv, kind, direction, nick, text in text_events:
        local = t.astimezone(zone)
        base = os.path.join(logs, "rooms", conv.replace("@", "_at_")) if kind == "groupchat" else os.path.join(logs, conv.replace("@", "_at_"))
        os.makedirs(base, exist_ok=True)
        stamp = local.strftime("%H:%M:%S") if old_logs else iso(t, zone)
        if kind == "groupchat":
            who = nick
        else:
            who = "me" if direction == "out" else conv
        if text.startswith("/me "):
            line = "%s - *%s %s\n" % (stamp, who, text[4:])
        else:
            line = "%s - %s: %s\n" % (stamp, who, text)
        with open(os.path.join(base, local.strftime("%Y_%m_%d.log")), "a", encoding="utf-8") as f:
            f.write(line)
        result["messages"].append(expected(t, conv, kind, direction, nick, text))
    return folder, result


# ---------------------------------------------------------------- Pidgin

def purple_escape(name):
    out = ""
    for ch in name:
        if ch.isascii() and (ch.isalnum() or ch in "@-_.#"):
            out += ch
        else:
            out += "".join("%%%02x" % b for b in ch.encode("utf-8"))
    return out


def html_escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;").replace("'", "&apos;")


class PidginSession:
    """One conversation session file, as libpurple's html or txt logger writes it."""

    def __init__(self, root, account_full, conversation, start, zone, fmt, room=False):
        self.fmt = fmt
        self.zone = zone
        self.room = room
        self.start = start.astimezone(zone)
        folder = os.path.join(root, purple_escape(account_full.split("/")[0]), purple_escape(conversation + (".chat" if room else "")))
        os.makedirs(folder, exist_ok=True)
        tzname = self.start.strftime("%Z")
        name = self.start.strftime("%Y-%m-%d.%H%M%S") + self.start.strftime("%z") + purple_escape(tzname) + "." + fmt
        self.path = os.path.join(folder, name)
        header = "Conversation with %s at %s on %s (jabber)" % (conversation, self.start.strftime("%a %d %b %Y %I:%M:%S %p %Z"), account_full)
        with open(self.path, "w", encoding="utf-8") as f:
            if fmt == "html":
                f.write('<html><head><meta http-equiv="content-type" content="text/html; charset=UTF-8"><title>%s</title></head><body><h3>%s</h3>\n'
                        % (header, header))
            else:
                f.write(header + "\n")

    def stamp(self, t, dated=False, style="24"):
        local = t.astimezone(self.zone)
        if style == "12":
            text = local.strftime("%I:%M:%S %p").lstrip("0")
        else:
            text = local.strftime("%H:%M:%S")
        if dated:
            text = local.strftime("%m/%d/%Y ") + text
        return text

    def message(self, t, name, text, sent, dated=False, style="24"):
        when = self.stamp(t, dated, style)
        action = text.startswith("/me ")
        body = text[4:] if action else text
        with open(self.path, "a", encoding="utf-8") as f:
            if self.fmt == "html":
                markup = html_escape(body).replace("\n", "<br/>")
                if action:
                    f.write('<font color="#062585"><font size="2">(%s)</font> <b>***%s</b></font> %s<br/>\n' % (when, html_escape(name), markup))
                else:
                    color = "#16569E" if sent else "#A82F2F"
                    f.write('<font color="%s"><font size="2">(%s)</font> <b>%s:</b></font> %s<br/>\n' % (color, when, html_escape(name), markup))
            else:
                if action:
                    f.write("(%s) ***%s %s\n" % (when, name, body))
                else:
                    f.write("(%s) %s: %s\n" % (when, name, body))

    def system(self, t, text):
        with open(self.path, "a", encoding="utf-8") as f:
            if self.fmt == "html":
                f.write('<font size="2">(%s)</font><b> %s</b><br/>\n' % (self.stamp(t), html_escape(text)))
            else:
                f.write("(%s) %s\n" % (self.stamp(t), text))

    def close(self):
        if self.fmt == "html":
            with open(self.path, "a", encoding="utf-8") as f:
                f.write("</body></html>\n")


def pidgin(out, live=None):
    folder = os.path.join(out, "overlap-pidgin" if live is not None else "pidgin")
    root = os.path.join(folder, ".purple", "logs", "jabber")
    result = {"messages": [], "refused": {}, "not_messages": {}, "files": 0}
    if live is not None:
        account = live[0]["account"]
        peer = live[0]["conversation"]
        start = dt.datetime.fromisoformat(live[0]["timestamp"].replace("Z", "+00:00")) - dt.timedelta(seconds=30)
        s = PidginSession(root, account + "/Home", peer, start, BERLIN, "html")
        for row in live:
            t = dt.datetime.fromisoformat(row["timestamp"].replace("Z", "+00:00")).replace(microsecond=0)
            out_dir = row["direction"] == "out"
            s.message(t, account + "/Home" if out_dir else peer.split("@")[0].capitalize(), row["body"], out_dir)
        extra_t = start - dt.timedelta(days=3)
        s2 = PidginSession(root, account + "/Home", peer, extra_t, BERLIN, "html")
        for i, text in enumerate(["only in Pidgin's log", "只在 Pidgin 的記錄裡"]):
            t = extra_t + dt.timedelta(seconds=10 + i)
            s2.message(t, peer.split("@")[0].capitalize(), text, False)
            result["messages"].append(dict(expected(t, peer, "chat", "in", None, text, precision="s"), account=account))
        s.close()
        s2.close()
        return folder, result

    # HTML, one-to-one, Berlin winter time (+0100), with a system line and a /me of one's own.
    s = PidginSession(root, ME + "/Home", ALICE, T0 - dt.timedelta(seconds=5), BERLIN, "html")
    for t, conv, kind, direction, nick, text in BASE:
        if conv == ALICE and t < T1:
            s.message(t, "me@example.org/Home" if direction == "out" else "Alice", text, direction == "out")
            result["messages"].append(expected(t, conv, kind, direction, nick, text, precision="s"))
    s.system(T0 + dt.timedelta(seconds=305), "Alice has signed off.")
    s.message(T0 + dt.timedelta(seconds=310), "me@example.org/Home", "/me sighs", True)
    result["messages"].append(expected(T0 + dt.timedelta(seconds=310), ALICE, "chat", "out", None, "/me sighs", precision="s"))
    # Pidgin knows no corrections: the first text and the corrected one are two messages in its log.
    t, conv, direction, first, second, t2 = CORRECTION
    s.message(t, "me@example.org/Home", first, True)
    s.message(t2, "me@example.org/Home", second, True)
    result["messages"].append(expected(t, conv, "chat", direction, None, first, precision="s"))
    result["messages"].append(expected(t2, conv, "chat", direction, None, second, precision="s"))
    s.close()
    # Text, one-to-one, Tokyo (+0900), 12-hour clock, and an offline message written with its date.
    s = PidginSession(root, ME + "/Home", WANG, T0 + dt.timedelta(seconds=90), TOKYO, "txt")
    delayed = T0 - dt.timedelta(days=2, hours=3)
    s.message(delayed, "王先生", "离线消息：周末愉快", False, dated=True, style="12")
    result["messages"].append(expected(delayed, WANG, "chat", "in", None, "离线消息：周末愉快", precision="s"))
    for t, conv, kind, direction, nick, text in BASE:
        if conv == WANG:
            s.message(t, "me@example.org/Home" if direction == "out" else "王先生", text, direction == "out", style="12")
            result["messages"].append(expected(t, conv, kind, direction, nick, text, precision="s"))
    s.system(T0 + dt.timedelta(seconds=140), "wang@example.cn/phone has gone away.")
    s.close()
    # Text, crossing midnight in Berlin: the session starts on the 4th, the reply is on the 5th.
    s = PidginSession(root, ME + "/Home", ALICE, T1 - dt.timedelta(seconds=10), BERLIN, "txt")
    for t, conv, kind, direction, nick, text in BASE:
        if t >= T1 and kind == "chat":
            s.message(t, "me@example.org/Home" if direction == "out" else "Alice", text, direction == "out")
            result["messages"].append(expected(t, conv, kind, direction, nick, text, precision="s"))
    s.close()
    # A room, HTML, New York (-0500), with the own nick on sent lines.
    s = PidginSession(root, ME + "/Home", ROOM, at(2024, 1, 20, 13, 59, 0), NEW_YORK, "html", room=True)
    for t, conv, kind, direction, nick, text in BASE:
        if conv == ROOM:
            s.message(t, nick, text, False)
            result["messages"].append(expected(t, conv, kind, direction, nick, text, precision="s"))
    t = at(2024, 1, 20, 14, 2, 0)
    s.message(t, "menick", "hello from Pidgin", True)
    result["messages"].append(expected(t, ROOM, "groupchat", "out", "menick", "hello from Pidgin", precision="s"))
    s.system(at(2024, 1, 20, 14, 3, 0), "bob left the room.")
    s.close()
    result["not_messages"] = {"Pidgin status and system lines": 3}
    return folder, result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--live", help="JSON lines of messages Roost archived from a server (roost search --json)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    manifest = {}
    if args.live:
        with open(args.live, encoding="utf-8") as f:
            live = [json.loads(line) for line in f if line.strip()]
        live.sort(key=lambda r: r["timestamp"])
        for name, maker in (("overlap-pidgin", lambda: pidgin(args.out, live)),
                            ("overlap-dino", lambda: dino(args.out, "dino-29.sql", "overlap-dino", live))):
            folder, result = maker()
            manifest[name] = dict(result, path=folder)
    else:
        for name, maker in (
                ("gajim-0.16", lambda: gajim_legacy(args.out, "gajim-0.16.sql")),
                ("gajim-1.8", lambda: gajim_legacy(args.out, "gajim-1.8.sql")),
                ("gajim-2", lambda: gajim_current(args.out)),
                ("dino-11", lambda: dino(args.out, "dino-11.sql")),
                ("dino-29", lambda: dino(args.out, "dino-29.sql")),
                ("profanity", lambda: profanity(args.out, "profanity-0.18.sql", old_logs=False)),
                ("profanity-old", lambda: profanity(args.out, "profanity-0.10.sql", old_logs=True)),
                ("pidgin", lambda: pidgin(args.out))):
            folder, result = maker()
            manifest[name] = dict(result, path=folder)
    with open(os.path.join(args.out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, ensure_ascii=False, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
