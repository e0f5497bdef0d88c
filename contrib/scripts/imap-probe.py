#!/usr/bin/env python3
"""imap-probe.py — an IMAP client for Roost's tests (Python's imaplib, as a mail client would use IMAP).

    imap-probe.py --port P --user U --password W list
    imap-probe.py ... fetch [--mailbox INBOX] [--search JSON]
    imap-probe.py ... wait  [--mailbox INBOX] --search JSON [--count N] [--timeout SECONDS]
    imap-probe.py ... store [--mailbox INBOX] --search JSON (--add FLAG... | --remove FLAG...)

--search is a JSON array of IMAP SEARCH keys, e.g. '["SUBJECT", "bob"]' or '["BODY", "你好"]' (default ["ALL"]); at
only the last may hold non-ASCII text (sent as a UTF-8 literal, CHARSET UTF-8).

Every command prints one JSON object on the last line of stdout and exits 0, or prints {"error": ...} and exits 1:
  list   {"folders": [{"name", "flags", "separator"}]}
  fetch  {"exists": N, "messages": [MESSAGE]} — the messages the search finds, in UID order
  wait   selects the mailbox, prints {"event": "selected", "exists": N} at once, then asks the server (NOOP, every
         0.2 s, in the same selected session: what a client in IDLE is told) until the search finds --count messages
         (default 1) or --timeout (default 30) passes (exit 1); then prints what fetch prints
  store  adds or removes flags on the messages found; prints what fetch prints (with the new flags)

MESSAGE: {"uid", "flags": [...], "internal_date" (as the server gives it: a Maildir file's mtime), "from", "to", "subject", "date", "message_id", "in_reply_to", "references"
(headers decoded as a mail client shows them, RFC 2047), "body" (the text/plain part, decoded), "attachments": [{"name",
"type", "size", "sha256"}], "size" (RFC822.SIZE), "defects" (what Python's email parser found wrong)}.
"""
import argparse
import email
import email.policy
import hashlib
import imaplib
import json
import re
import sys
import time
from email.header import decode_header, make_header


def decoded(value):
    return None if value is None else str(make_header(decode_header(value)))


def quoted(key):
    """An IMAP atom as it is, anything else (spaces, quotes, an empty string) as a quoted string."""
    if key and re.fullmatch(r"[A-Za-z0-9.:,<>*+@_-]+", key):
        return key
    return '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


def search(imap, keys):
    wide = [k for k in keys if not k.isascii()]
    if len(wide) > 1 or (wide and wide[0] is not keys[-1]):
        raise ValueError("only the last search key may hold non-ASCII text")
    if wide:
        # imaplib sends its literal after the other arguments.
        imap.literal = wide[0].encode("utf-8")
        status, data = imap.uid("SEARCH", "CHARSET", "UTF-8", *map(quoted, keys[:-1]))
    else:
        status, data = imap.uid("SEARCH", *map(quoted, keys))
    if status != "OK":
        raise RuntimeError(f"SEARCH {keys}: {data}")
    return [int(u) for u in data[0].split()]


def fetch(imap, uids):
    messages = []
    for uid in uids:
        status, data = imap.uid("FETCH", str(uid), "(FLAGS RFC822.SIZE INTERNALDATE BODY.PEEK[])")
        if status != "OK":
            raise RuntimeError(f"FETCH {uid}: {data}")
        meta, raw = next((d[0], d[1]) for d in data if isinstance(d, tuple))
        flags = re.search(rb"FLAGS \(([^)]*)\)", meta).group(1).decode().split()
        size = int(re.search(rb"RFC822\.SIZE (\d+)", meta).group(1))
        internal_date = re.search(rb'INTERNALDATE "([^"]*)"', meta).group(1).decode()
        message = email.message_from_bytes(raw, policy=email.policy.compat32)
        body, attachments = None, []
        for part in message.walk():
            if part.get_content_maintype() == "multipart":
                continue
            if part.get_filename():
                payload = part.get_payload(decode=True) or b""
                attachments.append({"name": decoded(part.get_filename()), "type": part.get_content_type(),
                                    "size": len(payload), "sha256": hashlib.sha256(payload).hexdigest()})
            elif part.get_content_type() == "text/plain" and body is None:
                body = part.get_payload(decode=True).decode(part.get_content_charset() or "us-ascii")
        messages.append({
            "uid": uid, "flags": flags, "size": size, "internal_date": internal_date,
            "from": decoded(message["From"]), "to": decoded(message["To"]), "subject": decoded(message["Subject"]),
            "date": message["Date"], "message_id": message["Message-ID"], "in_reply_to": message["In-Reply-To"],
            "references": message["References"], "body": body, "attachments": attachments,
            "defects": [str(d) for part in message.walk() for d in part.defects],
        })
    return messages


def select(imap, mailbox):
    status, data = imap.select(f'"{mailbox}"')
    if status != "OK":
        raise RuntimeError(f"SELECT {mailbox}: {data}")
    return int(data[0])


def emit(value):
    print(json.dumps(value, ensure_ascii=False), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("command", choices=["list", "fetch", "wait", "store"])
    parser.add_argument("--mailbox", default="INBOX")
    parser.add_argument("--search", default='["ALL"]')
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=30)
    parser.add_argument("--add", nargs="*", default=[])
    parser.add_argument("--remove", nargs="*", default=[])
    options = parser.parse_args()
    keys = json.loads(options.search)

    imap = imaplib.IMAP4(options.host, options.port, timeout=max(options.timeout, 30))
    imap.login(options.user, options.password)
    if options.command == "list":
        status, data = imap.list()
        folders = []
        for line in data:
            match = re.match(rb'\(([^)]*)\) "([^"]*)" (.*)', line)
            name = match.group(3).decode()
            folders.append({"name": name[1:-1] if name.startswith('"') else name,
                            "flags": match.group(1).decode().split(), "separator": match.group(2).decode()})
        emit({"folders": folders})
        return 0
    exists = select(imap, options.mailbox)
    if options.command == "wait":
        emit({"event": "selected", "exists": exists})
        deadline = time.monotonic() + options.timeout
        while len(found := search(imap, keys)) < options.count:
            if time.monotonic() > deadline:
                emit({"error": f"{options.count} message(s) matching {keys} did not appear within {options.timeout} s",
                      "found": len(found)})
                return 1
            time.sleep(0.2)
            imap.noop()
        uids = found
    else:
        uids = search(imap, keys)
    if options.command == "store":
        for flag_set, sign in ((options.add, "+"), (options.remove, "-")):
            if flag_set and uids:
                status, data = imap.uid("STORE", ",".join(map(str, uids)), f"{sign}FLAGS", f"({' '.join(flag_set)})")
                if status != "OK":
                    raise RuntimeError(f"STORE: {data}")
    emit({"exists": exists, "messages": fetch(imap, uids)})
    imap.logout()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as error:  # one JSON line for the test, whatever failed
        emit({"error": f"{type(error).__name__}: {error}"})
        sys.exit(1)
