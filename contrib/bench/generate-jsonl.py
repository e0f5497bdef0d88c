#!/usr/bin/env python3
"""generate-jsonl — a synthetic history in Roost's jsonl export format, for the benchmarks (contrib/bench/all).

    generate-jsonl.py --messages N [--seed S] [--start YYYY] > history.jsonl

Deterministic for a seed. What makes it realistic where it matters for speed:
- ids are random (UUID-like stanza-ids, origin-ids and message ids, as real servers and clients make them),
  so index pages are dirtied all over a batch;
- each message carries its raw stanza (~0.5 kB), as live and MAM messages do;
- conversations follow a Zipf law over 300 contacts and 10 rooms (the largest holds ~17 % of the messages);
- 15 % of the bodies are CJK; 1 % of the messages are XEP-0308 corrections, half of them of a message the
  history holds (the sender's previous one), half of one it does not (a miss walks the lookup's worst path).
Different seeds give disjoint ids, so a second file imports as new messages into an archive built from the first.
"""
import argparse
import bisect
import calendar
import json
import random
import sys
import time
import uuid

WORDS = ("the meeting is at noon tomorrow can you send me that file please thanks see you later where are "
         "we going tonight I think the build is broken again coffee lunch train late sorry great idea what "
         "about the weekend release notes ready review done merged deploy server down back up again holiday "
         "photos birthday call me when you can").split()
CJK = "我们明天中午开会请把文件发给我谢谢晚上见今天天气很好你在哪里吃饭了吗周末一起去看电影吧"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--start", type=int, default=2019, help="year of the first message")
    args = parser.parse_args()
    rng = random.Random(args.seed)

    def rid():
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    accounts = ["alice@example.org", "bob@example.net"]
    peers = [f"contact{i}@example.com" for i in range(300)] + [f"room{i}@conference.example.com" for i in range(10)]
    account_of = {peer: accounts[i % 2] for i, peer in enumerate(peers)}
    weights = [1.0 / (i + 1) for i in range(len(peers))]
    cumulative = []
    total = 0.0
    for w in weights:
        total += w
        cumulative.append(total)
    ms = calendar.timegm((args.start, 1, 1, 0, 0, 0)) * 1000 + args.seed * 7
    last_sent = {}
    out = sys.stdout
    write = out.write

    def utc(t):
        s, m = divmod(t, 1000)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + ".%03dZ" % m

    for n in range(args.messages):
        ms += rng.randrange(1, 60_000)
        peer = peers[bisect.bisect_left(cumulative, rng.random() * total)]
        account = account_of[peer]
        room = peer.startswith("room")
        outgoing = (not room) and rng.random() < 0.5
        if rng.random() < 0.15:
            body = "".join(rng.choice(CJK) for _ in range(rng.randrange(4, 30)))
        else:
            body = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(3, 20)))
        nick = f"nick{rng.randrange(20)}"
        if outgoing:
            frm, to = account + "/roost", peer
        elif room:
            frm, to = f"{peer}/{nick}", account + "/roost"
        else:
            frm, to = peer + "/phone", account + "/roost"
        sid, oid, mid = rid(), rid(), rid()
        replaces = None
        r = rng.random()
        key = (account, peer, frm)
        if r < 0.005 and key in last_sent:
            replaces = last_sent[key]
            body = body + " (fixed)"
        elif r < 0.01:
            replaces = rid()  # a correction of a message this history does not hold
        ts = utc(ms)
        typ = "groupchat" if room else "chat"
        raw = (f'<message xmlns="jabber:client" from="{frm}" to="{to}" type="{typ}" id="{mid}">'
               f'<body>{body}</body><origin-id xmlns="urn:xmpp:sid:0" id="{oid}"/>'
               f'<stanza-id xmlns="urn:xmpp:sid:0" by="{account}" id="{sid}"/>'
               f'<active xmlns="http://jabber.org/protocol/chatstates"/><request xmlns="urn:xmpp:receipts"/>'
               + (f'<replace xmlns="urn:xmpp:message-correct:0" id="{replaces}"/>' if replaces else "")
               + f'<delay xmlns="urn:xmpp:delay" from="{account.split("@")[1]}" stamp="{ts}"/></message>')
        record = {
            "version": 1, "event": "message", "account": account, "conversation": peer,
            "direction": "out" if outgoing else "in", "type": typ, "from": frm, "to": to,
            "sender_name": nick if room else None, "body": body, "timestamp": ts, "received_at": ts,
            "stanza_id": sid, "stanza_id_by": account, "stanza_id_trusted": True, "origin_id": oid,
            "message_id": mid, "source": "mam", "raw": raw,
        }
        if replaces:
            record["replaces"] = replaces
        else:
            last_sent[key] = mid
        write(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        write("\n")


if __name__ == "__main__":
    main()
