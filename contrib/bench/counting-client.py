#!/usr/bin/env python3
"""counting-client.py: the server's delivery rate, for contrib/bench/ingest.

A slixmpp client that only counts received chat messages whose id starts with --prefix, and stores
nothing. When --count messages have arrived (or nothing arrived for --idle seconds) it prints one JSON
line: {"client": "counting", "received": N, "seconds": S, "rate": N/S, "done_at": T, "cpu": C}, where S
runs from the first to the last received message, T is the wall-clock time (epoch seconds) of the last one and
C the CPU seconds this process spent from login to it. Without stream management unless --sm (Roost always uses it: with --sm this
client pays the same server-side cost, XEP-0198 queueing and acks, so it isolates Roost's own cost).

    counting-client.py --jid alice@roost.test/count --password PW --host 127.0.0.1 --port 5222 \
        --ca ca.crt --prefix bench-1 --count 20000
"""
import argparse
import asyncio
import json
import sys
import time

import slixmpp


class Counter(slixmpp.ClientXMPP):
    def __init__(self, args):
        super().__init__(args.jid, args.password)
        self.args = args
        self.received = 0
        self.first = None
        self.last = None
        self.last_wall = None  # time.time() of the last message (counted or committed), for contrib/bench/ingest
        self.cpu_online = self.cpu_last = 0.0  # process CPU seconds when online and at the last message
        self.done = asyncio.Event()
        self.ready = asyncio.Event()
        if args.sm:
            self.register_plugin("xep_0198")
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
        now = time.monotonic()
        if self.first is None:
            self.first = now
        self.last = now
        self.last_wall = time.time()
        self.cpu_last = time.process_time()
        self.received += 1
        if self.received >= self.args.count:
            self.done.set()


def parse_args():
    p = argparse.ArgumentParser(description="count received messages (the server's delivery rate)")
    p.add_argument("--jid", required=True)
    p.add_argument("--password", required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=5222)
    p.add_argument("--ca", help="CA certificate to trust")
    p.add_argument("--prefix", required=True, help="count messages whose id is <prefix>-<n>")
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--sm", action="store_true", help="enable stream management (XEP-0198), as Roost does")
    p.add_argument("--idle", type=float, default=30, help="give up after this many seconds without a message")
    return p.parse_args()


async def main():
    args = parse_args()
    client = Counter(args)
    client.ca_certs = args.ca or None
    client.connect((args.host, args.port), force_starttls=True)
    await asyncio.wait_for(client.ready.wait(), 30)
    seen = -1
    while not client.done.is_set():
        try:
            await asyncio.wait_for(client.done.wait(), args.idle)
        except asyncio.TimeoutError:
            if client.received == seen:
                break
            seen = client.received
    seconds = (client.last - client.first) if client.first is not None else 0.0
    print(json.dumps({"client": "counting", "received": client.received, "seconds": round(seconds, 3),
                      "rate": round(client.received / seconds, 1) if seconds > 0 else 0,
                      "done_at": client.last_wall, "cpu": round(client.cpu_last - client.cpu_online, 3)}), flush=True)
    client.disconnect()
    return 0 if client.received >= args.count else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
