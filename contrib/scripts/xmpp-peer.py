#!/usr/bin/python3
"""xmpp-peer.py: a small scripted XMPP client, the "other side" in Roost's tests and demo.

It logs in as one account on the test server (contrib/scripts/prosody-test-server), does one thing,
and exits. Everything it observes is printed on stdout as JSON lines, so a test (Swift, via a
subprocess) can parse it; diagnostics go to stderr. Exit status: 0 success, 1 failure (login,
connection, timeout), 2 usage error.

Connection options default to the variables in the server's env file (ROOST_TEST_HOST,
ROOST_TEST_PORT, ROOST_TEST_CA_FILE, ...), and `--as alice` takes the JID and password from
ROOST_TEST_ALICE_JID / ROOST_TEST_ALICE_PASSWORD.

Commands:
  send TO BODY...          one message per BODY argument (type chat unless --type)
  flood TO N               N messages "msg-1".."msg-N" with ids "<prefix>-1".. (to each JID of a comma-separated
                           TO), then wait until the server acknowledged all of them (XEP-0198), or --drain
                           seconds without SM;
                           --chatstate-every K adds a standalone chat state after every K messages
  chatstate TO STATE       a bare XEP-0085 chat state (active, composing, paused, inactive, gone)
  subscribe TO             ask TO for a presence subscription; --wait S waits for the answer
  accept-all [SECONDS]     approve every subscription request for SECONDS (default 10), subscribing back
  presence SHOW [STATUS]   go online with SHOW (available, away, chat, dnd, xa) and STATUS, stay --hold seconds
  listen SECONDS           print received messages (and presence) as JSON lines for SECONDS; with
                           --download, fetch each shared file (XEP-0066 URL) and print its sha256
  mam [--with JID] [--max N] [--archive ROOM]
                           print the messages of the own MAM archive (or ROOM's) as JSON lines
  groupchat ROOM NICK BODY...  join ROOM (XEP-0045; created if new) as NICK, send each BODY, leave;
                           with --stay S, stay S seconds and print what arrives
  upload TO FILE           upload FILE (XEP-0363) and send TO a message with its URL (body and XEP-0066)
  session                  stay logged in and take commands on stdin (below) until "quit" or EOF

Global options of note: --register creates the account in-band (XEP-0077) before logging in.

Session mode: the interface tests drive
---------------------------------------
`xmpp-peer.py --jid J --password P [--register] session` logs in, prints {"event": "online", "jid": ...}
and then reads one JSON object per line on stdin. Each command names itself and may carry a "tag":

    {"cmd": "send", "tag": "t1", "to": "alice@roost.test", "body": "hi", "chatstate": "active"}

and is answered, in order, with exactly one line

    {"event": "reply", "tag": "t1", "cmd": "send", "ok": true, ...result fields}
    {"event": "reply", "tag": "t1", "cmd": "send", "ok": false, "error": "why"}

While the session lasts, everything that arrives is printed as it arrives, interleaved with replies:
    {"event": "message", from, to, type, id, body, thread, chatstate, stanza_id, delay, carbon (received|sent),
                         error (condition of a type=error message), photo..., xml (the whole stanza)}
    {"event": "presence", "kind": subscribe|subscribed|unsubscribe|unsubscribed|available|unavailable,
                          from, to, show, status, priority, photo_hash (XEP-0153), xml}
    {"event": "roster-push", "items": [{jid, name, subscription, ask, groups}]}
Stdout carries nothing else; diagnostics go to stderr. The process exits 0 after "quit" (or EOF) and a
clean logout, 1 if the login failed (after printing {"event": "error", ...}).

Session commands (fields in brackets are optional):
    send       to, [body], [type=chat], [id], [thread], [chatstate], [receipt_request]   → id
    chatstate  to, state                                              → id
    presence   [to], [type] (subscribe, subscribed, unsubscribe, unsubscribed, unavailable, probe),
               [show], [status], [priority=0], [photo_hash]            (no "to": a broadcast)
    roster-get                                                        → items
    roster-set jid, [name], [groups]                                  → (waits for the server's answer)
    roster-remove jid
    vcard-set  [fullname], [nickname], [photo_type, photo_base64]     → publishes the own vCard (XEP-0054)
    vcard-get  [jid]                                                  → fullname, nickname, photo_type, photo_base64
    carbons    [enable=true]                                          → XEP-0280 on or off
    auto-accept [enable=true]                                         → answer every subscription request with
                                                                        subscribed + subscribe back
    iq         xml (a whole <iq/>, type get or set, any id)           → type, xml of the answer
    raw        xml (any stanza, sent as is)
    react      to, id, [reactions=[]], [type=chat], [body] (a fallback)   → id   XEP-0444 (slixmpp's xep_0444), store hint
    reply      to, reply_id, body, [reply_to], [quote], [type=chat]      → id   XEP-0461; with quote, the body starts with
                                                                        "> quote\n" marked as XEP-0428 fallback
    retract    to, id, [type=chat]                                       → id   XEP-0424 (slixmpp's xep_0424, fallback body)
    marker     to, id, [marker=displayed], [type=chat]                   → id   XEP-0333 received/displayed/acknowledged
    receipt    to, id                                                    → id   XEP-0184 <received/>
    ping       [to]                                                   → round trip to the server (or to)
    quit
Extending it (MUC, OMEMO, uploads, …): write `async def cmd_name(peer, command) -> dict` and decorate it
with `@session_command("name")`; raise PeerCommandError for a failed command. Received-stanza events come
from Peer.on_message / on_presence / on_roster_push; add fields there rather than new event kinds where
an existing one fits.

Group chats (the section at the end of this file):
  muc ROOM NICK [--subject S] [--kick NICK] [--send BODY]... [--pm NICK=BODY]... [--flood N] [--react ID=EMOJI,..]
                           [--retract ID] [--invite JID] [--stay S]
                           join ROOM as NICK (no history), then do each thing asked, in that order, and leave
  bookmark ROOM [--autojoin] [--nick N] [--name NAME] [--room-password P] [--remove] [--legacy]
                           publish (or retract) the account's bookmark of ROOM: XEP-0402 PEP with raw pubsub
                           stanzas (Debian's slixmpp has no XEP-0402), or XEP-0048 private storage with --legacy
  invite TO ROOM [--reason R] [--room-password P]
                           a direct invitation (XEP-0249) to ROOM
  raw XML...               send each XML stanza as written (forgeries for security tests), then wait until the
                           server has answered a ping, so everything sent before was processed
"""

import argparse
import asyncio
import base64
import hashlib
import json
import logging
import os
import sys
import time
import xml.etree.ElementTree as ET

try:
    import slixmpp
    from slixmpp.exceptions import IqError, IqTimeout
    from slixmpp.xmlstream.handler import Callback
    from slixmpp.xmlstream.matcher import MatchXPath, MatcherId
    from slixmpp.xmlstream import tostring
except ImportError:
    sys.stderr.write("xmpp-peer: python3-slixmpp is not installed for %s "
                     "(apt-get install python3-slixmpp; run with /usr/bin/python3)\n" % sys.executable)
    sys.exit(1)

CHAT_STATES = ("active", "composing", "paused", "inactive", "gone")
SHOWS = ("available", "away", "chat", "dnd", "xa")


def emit(event, **fields):
    fields = {"event": event, **{k: v for k, v in fields.items() if v not in (None, "")}}
    sys.stdout.write(json.dumps(fields, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def message_fields(msg):
    """The parts of a message a test is likely to assert on."""
    fields = {
        "from": str(msg["from"]),
        "to": str(msg["to"]),
        "type": msg["type"],
        "id": msg["id"],
        "body": msg["body"],
        "subject": msg["subject"],
        "thread": msg["thread"],
    }
    xml = msg.xml
    state = next((s for s in CHAT_STATES
                  if xml.find("{http://jabber.org/protocol/chatstates}%s" % s) is not None), None)
    fields["chatstate"] = state
    stanza_id = xml.find("{urn:xmpp:sid:0}stanza-id")
    if stanza_id is not None:
        fields["stanza_id"] = stanza_id.get("id")
        fields["stanza_id_by"] = stanza_id.get("by")
    oob = xml.find("{jabber:x:oob}x/{jabber:x:oob}url")
    if oob is not None:
        fields["oob_url"] = oob.text
    sfs = xml.find("{urn:xmpp:sfs:0}file-sharing/{urn:xmpp:file:metadata:0}file")
    if sfs is not None:
        fields["sfs_name"] = sfs.findtext("{urn:xmpp:file:metadata:0}name")
        fields["sfs_type"] = sfs.findtext("{urn:xmpp:file:metadata:0}media-type")
        fields["sfs_size"] = sfs.findtext("{urn:xmpp:file:metadata:0}size")
        fields["sfs_sha256"] = next((h.text for h in sfs.findall("{urn:xmpp:hashes:2}hash") if h.get("algo") == "sha-256"), None)
    delay = xml.find("{urn:xmpp:delay}delay")
    if delay is not None:
        fields["delay"] = delay.get("stamp")
    for kind in ("received", "displayed", "acknowledged"):
        marker = xml.find("{urn:xmpp:chat-markers:0}%s" % kind)
        if marker is not None:
            fields["marker"] = kind
            fields["marker_id"] = marker.get("id")
    error = xml.find("{jabber:client}error")
    if error is not None:
        fields["error"] = next((child.tag.split("}")[1] for child in error
                                if child.tag.startswith("{urn:ietf:params:xml:ns:xmpp-stanzas}")
                                and not child.tag.endswith("}text")), "undefined-condition")
        text = error.find("{urn:ietf:params:xml:ns:xmpp-stanzas}text")
        if text is not None:
            fields["error_text"] = text.text
    return fields


def carbon_fields(msg):
    """A XEP-0280 carbon: the forwarded message's fields, with carbon=received|sent and the wrapper's from."""
    for kind in ("received", "sent"):
        wrapper = msg.xml.find("{urn:xmpp:carbons:2}%s" % kind)
        if wrapper is None:
            continue
        inner = wrapper.find("{urn:xmpp:forward:0}forwarded/{jabber:client}message")
        if inner is None:
            return None
        fields = message_fields(slixmpp.Message(msg.stream, inner))
        fields["carbon"] = kind
        fields["carbon_from"] = str(msg["from"])
        return fields
    return None


class Peer(slixmpp.ClientXMPP):
    def __init__(self, args):
        super().__init__(args.jid, args.password)
        self.args = args
        self.ca_certs = args.ca or None
        self.session_ready = asyncio.Event()
        self.failure = None
        # Set before connecting: pending subscription requests and offline messages arrive right
        # after the initial presence, before the command itself starts.
        self.listening = args.command in ("listen", "accept-all", "session")
        self.auto_accept = args.command == "accept-all"
        self.session_mode = args.command == "session"
        self.register_plugin("xep_0030")
        self.register_plugin("xep_0085")
        self.register_plugin("xep_0199")
        self.register_plugin("xep_0059")
        self.register_plugin("xep_0297")
        self.register_plugin("xep_0313")
        self.register_plugin("xep_0066")
        self.register_plugin("xep_0045")
        if args.command == "upload":
            self.register_plugin("xep_0363")  # needs python3-aiohttp, so only when asked for
        if args.command == "session":
            self.register_plugin("xep_0054")
            self.register_plugin("xep_0280")
        if args.command in ("session", "muc"):
            # Message semantics (reactions, replies, retractions, receipts, markers): sent only when asked.
            self.register_plugin("xep_0334")
            self.register_plugin("xep_0444")
            self.register_plugin("xep_0461")
            self.register_plugin("xep_0424")
            self.register_plugin("xep_0333")
            self.register_plugin("xep_0184", {"auto_ack": False, "auto_request": False})
        if args.register:
            # The plugin parses the <register/> stream feature; its own handler cannot be used: slixmpp 1.8
            # queues every IQ until the session starts, so its registration request never leaves.
            self.register_plugin("xep_0077")
            self.unregister_feature("register", self.plugin["xep_0077"].order)
            self.register_feature("register", self.register_account, restart=False, order=self.plugin["xep_0077"].order)
        if not args.no_sm:
            self.register_plugin("xep_0198", {"allow_resume": False})
        # Subscriptions are answered by us (accept-all) or left pending, never auto-approved.
        self.auto_authorize = None
        self.auto_subscribe = False
        self.add_event_handler("session_start", self.on_session_start)
        self.add_event_handler("failed_auth", lambda _: self.fail("authentication failed for %s" % args.jid))
        self.add_event_handler("connection_failed", lambda e: self.fail("connection failed: %s" % e))
        # A stream lost during the command: what was sent after it went nowhere, so the command fails (slixmpp
        # would otherwise queue the rest silently and a flood would "finish" without the server having it).
        self.lost = None
        self.closing = False
        if args.command in ("send", "flood", "chatstate", "groupchat", "muc"):
            self.add_event_handler("disconnected", self.on_disconnected)
        # A raw handler sees every message once; slixmpp's "message" event skips e.g. bare chat states.
        self.register_handler(Callback("xmpp-peer: every message",
                                       MatchXPath("{jabber:client}message"), self.on_message))
        self.add_event_handler("presence_subscribe", self.on_subscribe)
        self.add_event_handler("presence_subscribed", lambda p: self.on_presence("subscribed", p))
        self.add_event_handler("presence_unsubscribe", lambda p: self.on_presence("unsubscribe", p))
        self.add_event_handler("presence_unsubscribed", lambda p: self.on_presence("unsubscribed", p))
        self.add_event_handler("presence_available", lambda p: self.on_presence("available", p))
        self.add_event_handler("presence_unavailable", lambda p: self.on_presence("unavailable", p))
        self.add_event_handler("roster_update", self.on_roster_push)

    def fail(self, reason):
        if self.failure is None:
            self.failure = reason
        self.session_ready.set()

    def on_disconnected(self, reason):
        if self.session_ready.is_set() and not self.closing:
            self.lost = self.lost or "the connection to the server was lost during the command (%s)" % (reason or "closed")

    async def on_session_start(self, _event):
        # The roster must be requested for Prosody to treat us as an "interested resource" that receives
        # presence and subscription requests: first the roster, then the initial presence (which brings the
        # requests stored meanwhile), and only then "online" — a request sent in between was otherwise kept
        # for a later login and never seen.
        try:
            await self.get_roster(timeout=self.args.timeout)
        except (IqError, IqTimeout) as e:
            self.fail("roster request failed: %s" % e)
            return
        if not self.args.no_initial_presence:
            self.send_presence()
        emit("online", jid=str(self.boundjid))
        self.session_ready.set()

    async def register_account(self, features):
        """XEP-0077 §3.1 before login: create the account with the JID's local part and the password."""
        if "mechanisms" in self.features:
            return False  # already authenticated
        request_id = self.new_id()
        answer = asyncio.get_running_loop().create_future()
        self.register_handler(Callback("xmpp-peer: registration answer", MatcherId(request_id),
                                       lambda stanza: answer.done() or answer.set_result(stanza), once=True))
        query = ET.Element("{jabber:iq:register}query")
        ET.SubElement(query, "{jabber:iq:register}username").text = self.boundjid.user
        ET.SubElement(query, "{jabber:iq:register}password").text = self.password
        self.send_raw("<iq type='set' id='%s'>%s</iq>" % (request_id, tostring(query)))
        try:
            stanza = await asyncio.wait_for(answer, self.args.timeout)
        except asyncio.TimeoutError:
            self.fail("no answer to the in-band registration of %s" % self.boundjid.bare)
            return False
        if stanza.xml.get("type") != "result":
            error = stanza.xml.find("{jabber:client}error")
            condition = next((c.tag.split("}")[1] for c in error), "?") if error is not None else "?"
            self.fail("in-band registration of %s failed: %s" % (self.boundjid.bare, condition))
        return False

    def on_message(self, msg):
        if not self.listening or (msg["type"] == "error" and not (self.args.show_errors or self.session_mode)):
            return
        fields = carbon_fields(msg) or message_fields(msg)
        if self.session_mode:
            fields["xml"] = tostring(msg.xml)
        emit("message", **fields)
        if getattr(self.args, "download", False) and fields.get("oob_url"):
            asyncio.ensure_future(self.download(fields["oob_url"]))

    async def download(self, url):
        """What a client does with a shared file: fetch it (with the server's CA) and hash it."""
        import ssl
        import urllib.request
        context = ssl.create_default_context(cafile=self.args.ca) if self.args.ca else None
        try:
            data = await asyncio.get_running_loop().run_in_executor(
                None, lambda: urllib.request.urlopen(url, timeout=self.args.timeout, context=context).read())
            emit("downloaded", url=url, bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
        except Exception as e:  # reported, not fatal: the test decides
            emit("download-failed", url=url, error=str(e))

    def presence_fields(self, kind, pres):
        fields = {"from": str(pres["from"]), "to": str(pres["to"]), "show": pres["show"], "status": pres["status"]}
        priority = pres.xml.find("{jabber:client}priority")
        if priority is not None:
            fields["priority"] = int(priority.text or 0)
        photo = pres.xml.find("{vcard-temp:x:update}x/{vcard-temp:x:update}photo")
        if photo is not None:
            fields["photo_hash"] = photo.text or ""
        if self.session_mode:
            fields["xml"] = tostring(pres.xml)
        return fields

    def on_presence(self, kind, pres):
        if self.listening and pres["from"] != self.boundjid:
            emit("presence", kind=kind, **self.presence_fields(kind, pres))

    def on_roster_push(self, iq):
        if self.session_mode and iq["type"] == "set":
            emit("roster-push", items=roster_items(iq["roster"]))

    def on_subscribe(self, pres):
        if self.listening:
            emit("presence", kind="subscribe", **self.presence_fields("subscribe", pres))
        if self.auto_accept:
            who = pres["from"].bare
            self.send_presence(pto=who, ptype="subscribed")
            self.send_presence(pto=who, ptype="subscribe")
            emit("accepted", jid=who)


async def sm_drain(peer, timeout):
    """Wait until the server acknowledged every stanza we sent (XEP-0198).

    True: all acknowledged; False: timed out; None: no stream management, so only a pause of
    --drain seconds to let the socket empty."""
    sm = peer.plugin["xep_0198"] if "xep_0198" in peer.plugin else None
    if peer.lost:
        return False
    if sm is None or not sm.enabled_out:
        await asyncio.sleep(peer.args.drain)
        return None
    sm.request_ack()
    deadline = time.monotonic() + timeout
    last_request = time.monotonic()
    while sm.unacked_queue:
        if time.monotonic() > deadline or peer.lost:
            return False
        if time.monotonic() - last_request > 1:
            sm.request_ack()
            last_request = time.monotonic()
        await asyncio.sleep(0.05)
    return True


async def cmd_send(peer, args):
    for i, body in enumerate(args.bodies):
        msg = peer.make_message(mto=args.to, mbody=body, mtype=args.type)
        msg["id"] = "%s-%d" % (args.id_prefix, i + 1) if args.id_prefix else msg["id"]
        if args.thread:
            msg["thread"] = args.thread
        if args.chatstate:
            msg["chat_state"] = args.chatstate
        for extra in args.extra_xml or []:
            msg.xml.append(ET.fromstring(extra))
        msg.send()
        emit("sent", to=args.to, id=msg["id"], body=body)
    if await sm_drain(peer, args.timeout) is False:
        raise TimeoutError("the server did not acknowledge all messages within %ss" % args.timeout)


async def cmd_flood(peer, args):
    started = time.monotonic()
    prefix = args.id_prefix or "flood"
    states = 0
    # TO may list several JIDs (comma-separated): each message goes to every one, with the same id, the order
    # turning with each message so that no recipient is always served first (contrib/bench/ingest floods all
    # its receivers at once this way).
    targets = args.to.split(",")
    for i in range(1, args.count + 1):
        for k in range(len(targets)):
            msg = peer.make_message(mto=targets[(i + k) % len(targets)], mbody="msg-%d%s" % (i, args.body_suffix), mtype=args.type)
            msg["id"] = "%s-%d" % (prefix, i)
            msg.send()
        if args.chatstate_every and i % args.chatstate_every == 0:
            # A standalone chat state (XEP-0085) with an id of its own: <prefix>-cs-<n>, alternating states.
            states += 1
            for target in targets:
                state = peer.make_message(mto=target, mtype=args.type)
                state["id"] = "%s-cs-%d" % (prefix, states)
                state["chat_state"] = "composing" if states % 2 else "paused"
                state.send()
        if args.rate:
            # Paced: message i leaves no earlier than i/rate seconds after the start (and, when behind, the
            # event loop still gets its turn every 50 messages).
            ahead = started + i / args.rate - time.monotonic()
            if ahead > 0:
                await asyncio.sleep(ahead)
            elif i % 50 == 0:
                await asyncio.sleep(0)
        elif i % 50 == 0:
            await asyncio.sleep(0)  # let the event loop write what is queued and read what arrives
        if i % max(1, 1000 // len(targets)) == 0 and await sm_drain(peer, args.timeout) is False:
            # Keep the send queue short: our <a/> answers to the server's <r/> queue behind it, and ejabberd
            # closes a stream that leaves more than 5000 stanzas unacknowledged — on ejabberd an offline
            # recipient's full offline store bounces every message back to us.
            raise TimeoutError("the server did not acknowledge messages within %ss" % args.timeout)
    acked = await sm_drain(peer, args.timeout)
    emit("flood", to=args.to, count=args.count, chatstates=states, acked=acked,
         seconds=round(time.monotonic() - started, 3))
    if acked is False:
        raise TimeoutError("the server did not acknowledge all %d messages within %ss" % (args.count, args.timeout))


async def cmd_chatstate(peer, args):
    msg = peer.make_message(mto=args.to, mtype="chat")
    msg["chat_state"] = args.state
    msg.send()
    emit("sent", to=args.to, id=msg["id"], chatstate=args.state)
    await sm_drain(peer, args.timeout)


async def cmd_subscribe(peer, args):
    peer.listening = args.wait > 0
    answered = asyncio.Event()
    peer.add_event_handler("presence_subscribed", lambda p: answered.set())
    peer.add_event_handler("presence_unsubscribed", lambda p: answered.set())
    peer.send_presence(pto=args.to, ptype="subscribe")
    emit("sent", to=args.to, presence="subscribe")
    if args.wait > 0:
        try:
            await asyncio.wait_for(answered.wait(), args.wait)
        except asyncio.TimeoutError:
            emit("timeout", waited=args.wait)
    await sm_drain(peer, args.timeout)


async def cmd_accept_all(peer, args):
    await asyncio.sleep(args.seconds)


async def cmd_presence(peer, args):
    show = None if args.show == "available" else args.show
    peer.send_presence(pshow=show, pstatus=args.status or None, ppriority=args.priority)
    emit("sent", presence=args.show, status=args.status)
    await sm_drain(peer, args.timeout)
    await asyncio.sleep(args.hold)


async def cmd_listen(peer, args):
    emit("listening", jid=str(peer.boundjid), seconds=args.seconds)
    await asyncio.sleep(args.seconds)


async def cmd_mam(peer, args):
    count = 0
    rsm = {"max": min(args.max, 250)}
    with_jid = slixmpp.JID(args.with_jid) if args.with_jid else None
    archive = slixmpp.JID(args.archive) if args.archive else None
    async for result in peer.plugin["xep_0313"].iterate(jid=archive, with_jid=with_jid, rsm=rsm, total=args.max):
        forwarded = result["mam_result"]["forwarded"]
        fields = message_fields(forwarded["stanza"])
        fields["archive_id"] = result["mam_result"]["id"]
        fields["archived_at"] = forwarded.xml.find("{urn:xmpp:delay}delay").get("stamp") \
            if forwarded.xml.find("{urn:xmpp:delay}delay") is not None else None
        emit("archived", **fields)
        count += 1
    emit("mam", count=count)


async def cmd_upload(peer, args):
    # slixmpp 1.8.3's service discovery here breaks on Python 3.11 (asyncio.wait on coroutines),
    # so name the service and skip discovery; the server enforces its own size limit.
    upload = peer.plugin["xep_0363"]
    upload.upload_service = slixmpp.JID(args.service or
                                        os.environ.get("ROOST_TEST_UPLOAD_DOMAIN") or
                                        "upload." + peer.boundjid.domain)
    upload.max_file_size = float("inf")
    url = await peer.plugin["xep_0363"].upload_file(args.file, timeout=args.timeout)
    msg = peer.make_message(mto=args.to, mbody=args.body or url, mtype="chat")
    msg["oob"]["url"] = url
    msg.send()
    emit("sent", to=args.to, id=msg["id"], url=url)
    await sm_drain(peer, args.timeout)


async def cmd_groupchat(peer, args):
    room = slixmpp.JID(args.room)
    if not room.domain or room.domain == room.bare and "@" not in args.room:
        raise ValueError("ROOM must be a room JID like room@conference.example")
    await peer.plugin["xep_0045"].join_muc_wait(room, args.nick, maxstanzas=0, timeout=args.timeout)
    emit("joined", room=room.bare, nick=args.nick)
    peer.listening = args.stay > 0
    for i, body in enumerate(args.bodies):
        msg = peer.make_message(mto=room.bare, mbody=body, mtype="groupchat")
        if args.id_prefix:
            msg["id"] = "%s-%d" % (args.id_prefix, i + 1)
        msg.send()
        emit("sent", to=room.bare, id=msg["id"], body=body)
    if await sm_drain(peer, args.timeout) is False:
        raise TimeoutError("the server did not acknowledge all messages within %ss" % args.timeout)
    await asyncio.sleep(args.stay)
    peer.plugin["xep_0045"].leave_muc(room, args.nick)


# ---- session mode ----

class PeerCommandError(Exception):
    """A session command that failed; its text goes into the reply's "error"."""


SESSION_COMMANDS = {}


def session_command(name):
    def register(function):
        SESSION_COMMANDS[name] = function
        return function
    return register


def roster_items(roster):
    items = []
    for jid, item in roster["items"].items():
        items.append({"jid": str(jid), "name": item["name"], "subscription": item["subscription"],
                      "ask": item["ask"], "groups": sorted(item["groups"])})
    return items


def required(command, key):
    value = command.get(key)
    if value in (None, ""):
        raise PeerCommandError("%s needs \"%s\"" % (command.get("cmd"), key))
    return value


async def answered(request, timeout):
    """Sends an Iq and returns the answer; an error answer becomes PeerCommandError."""
    try:
        return await request.send(timeout=timeout)
    except IqError as e:
        raise PeerCommandError("the server answered %s" % e.iq["error"]["condition"])
    except IqTimeout:
        raise PeerCommandError("no answer within %ss" % timeout)


@session_command("send")
async def session_send(peer, command):
    msg = peer.make_message(mto=required(command, "to"), mbody=command.get("body"), mtype=command.get("type", "chat"))
    if command.get("id"):
        msg["id"] = command["id"]
    if command.get("thread"):
        msg["thread"] = command["thread"]
    if command.get("chatstate"):
        msg["chat_state"] = command["chatstate"]
    msg.send()
    return {"id": msg["id"]}


@session_command("chatstate")
async def session_chatstate(peer, command):
    msg = peer.make_message(mto=required(command, "to"), mtype="chat")
    msg["chat_state"] = required(command, "state")
    msg.send()
    return {"id": msg["id"]}


@session_command("presence")
async def session_presence(peer, command):
    pres = peer.make_presence(pto=command.get("to"), ptype=command.get("type"), pshow=command.get("show"),
                              pstatus=command.get("status"),
                              ppriority=command.get("priority", 0) if not command.get("type") else None)
    if command.get("photo_hash") is not None:
        x = ET.SubElement(pres.xml, "{vcard-temp:x:update}x")
        ET.SubElement(x, "{vcard-temp:x:update}photo").text = command["photo_hash"]
    pres.send()
    return {}


@session_command("roster-get")
async def session_roster_get(peer, command):
    iq = peer.make_iq_get(queryxmlns="jabber:iq:roster")
    answer = await answered(iq, peer.args.timeout)
    return {"items": roster_items(answer["roster"])}


@session_command("roster-set")
async def session_roster_set(peer, command):
    iq = peer.Iq()
    iq["type"] = "set"
    iq["roster"]["items"] = {required(command, "jid"): {"name": command.get("name", ""), "groups": command.get("groups", [])}}
    await answered(iq, peer.args.timeout)
    return {}


@session_command("roster-remove")
async def session_roster_remove(peer, command):
    iq = peer.Iq()
    iq["type"] = "set"
    iq["roster"]["items"] = {required(command, "jid"): {"subscription": "remove"}}
    await answered(iq, peer.args.timeout)
    return {}


@session_command("vcard-set")
async def session_vcard_set(peer, command):
    vcard = peer["xep_0054"].make_vcard()
    if command.get("fullname"):
        vcard["FN"] = command["fullname"]
    if command.get("nickname"):
        vcard["NICKNAME"] = command["nickname"]
    if command.get("photo_base64"):
        vcard["PHOTO"]["TYPE"] = command.get("photo_type", "image/png")
        vcard["PHOTO"]["BINVAL"] = base64.b64decode(command["photo_base64"])
    iq = peer.make_iq_set()
    iq.append(vcard)
    await answered(iq, peer.args.timeout)
    return {}


@session_command("vcard-get")
async def session_vcard_get(peer, command):
    iq = peer.make_iq_get(ito=command.get("jid"))
    iq.enable("vcard_temp")
    answer = await answered(iq, peer.args.timeout)
    vcard = answer["vcard_temp"]
    photo = vcard["PHOTO"]["BINVAL"] if vcard.xml.find("{vcard-temp}PHOTO") is not None else b""
    nickname = vcard["NICKNAME"]
    return {"fullname": vcard["FN"], "nickname": nickname[0] if isinstance(nickname, list) and nickname else nickname or "",
            "photo_type": vcard["PHOTO"]["TYPE"] if photo else "",
            "photo_base64": base64.b64encode(photo).decode() if photo else ""}


@session_command("carbons")
async def session_carbons(peer, command):
    iq = peer.Iq()
    iq["type"] = "set"
    iq.append(ET.Element("{urn:xmpp:carbons:2}%s" % ("enable" if command.get("enable", True) else "disable")))
    await answered(iq, peer.args.timeout)
    return {}


@session_command("auto-accept")
async def session_auto_accept(peer, command):
    peer.auto_accept = bool(command.get("enable", True))
    return {}


@session_command("iq")
async def session_iq(peer, command):
    element = ET.fromstring(required(command, "xml"))
    iq = peer.Iq(xml=element)
    if not iq["id"]:
        iq["id"] = peer.new_id()
    try:
        answer = await iq.send(timeout=peer.args.timeout)
    except IqError as e:
        answer = e.iq
    except IqTimeout:
        raise PeerCommandError("no answer within %ss" % peer.args.timeout)
    return {"type": answer["type"], "xml": tostring(answer.xml)}


@session_command("raw")
async def session_raw(peer, command):
    peer.send_raw(required(command, "xml"))
    return {}


def semantic_message(peer, command):
    """A message for the semantics commands: type chat (carbon-copied and archived by the server), with an id."""
    msg = peer.make_message(mto=required(command, "to"), mtype=command.get("type", "chat"))
    msg["id"] = command.get("message_id") or peer.new_id()
    return msg


@session_command("react")
async def session_react(peer, command):
    msg = semantic_message(peer, command)
    peer.plugin["xep_0444"].set_reactions(msg, required(command, "id"), command.get("reactions", []))
    msg.enable("store")
    if command.get("body"):
        msg["body"] = command["body"]
    msg.send()
    return {"id": msg["id"]}


@session_command("reply")
async def session_reply(peer, command):
    msg = semantic_message(peer, command)
    msg["reply"]["id"] = required(command, "reply_id")
    if command.get("reply_to"):
        msg["reply"]["to"] = command["reply_to"]
    body = required(command, "body")
    quote = command.get("quote")
    if quote:
        fallback = "> " + quote + "\n"
        msg["body"] = fallback + body
        msg["feature_fallback"]["fallback_body"]["start"] = "0"
        msg["feature_fallback"]["fallback_body"]["end"] = str(len(fallback))
    else:
        msg["body"] = body
    msg.send()
    return {"id": msg["id"]}


@session_command("retract")
async def session_retract(peer, command):
    peer.plugin["xep_0424"].send_retraction(slixmpp.JID(required(command, "to")), required(command, "id"),
                                            mtype=command.get("type", "chat"))
    return {}


@session_command("marker")
async def session_marker(peer, command):
    msg = semantic_message(peer, command)
    marker = command.get("marker", "displayed")
    if marker not in ("received", "displayed", "acknowledged"):
        raise PeerCommandError("marker must be received, displayed or acknowledged")
    msg[marker]["id"] = required(command, "id")
    msg.enable("store")
    msg.send()
    return {"id": msg["id"]}


@session_command("receipt")
async def session_receipt(peer, command):
    msg = semantic_message(peer, command)
    msg["receipt"] = required(command, "id")
    msg.send()
    return {"id": msg["id"]}


@session_command("ping")
async def session_ping(peer, command):
    started = time.monotonic()
    await peer["xep_0199"].ping(jid=command.get("to") or peer.boundjid.domain, timeout=peer.args.timeout)
    return {"seconds": round(time.monotonic() - started, 3)}


async def stdin_lines():
    """Yields stdin lines without blocking the event loop."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=16 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while True:
        line = await reader.readline()
        if not line:
            return
        yield line.decode("utf-8", "replace").strip()


async def cmd_session(peer, args):
    async for line in stdin_lines():
        if not line:
            continue
        try:
            command = json.loads(line)
            name = command["cmd"]
        except (ValueError, KeyError, TypeError):
            emit("reply", ok=False, error="not a JSON command: %s" % line[:200])
            continue
        reply = {"cmd": name, "tag": command.get("tag")}
        if name == "quit":
            emit("reply", ok=True, **reply)
            break
        handler = SESSION_COMMANDS.get(name)
        if handler is None:
            emit("reply", ok=False, error="unknown command %s (known: %s)" % (name, ", ".join(sorted(SESSION_COMMANDS))), **reply)
            continue
        try:
            result = await handler(peer, command)
        except (PeerCommandError, ValueError, KeyError, ET.ParseError) as e:
            emit("reply", ok=False, error=str(e) or e.__class__.__name__, **reply)
            continue
        # Replies follow the server's acknowledgement of what the command sent, so "ok" means "accepted".
        if await sm_drain(peer, args.timeout) is False:
            emit("reply", ok=False, error="the server did not acknowledge within %ss" % args.timeout, **reply)
            continue
        emit("reply", ok=True, **reply, **(result or {}))


COMMANDS = {
    "session": cmd_session,
    "send": cmd_send, "flood": cmd_flood, "chatstate": cmd_chatstate, "subscribe": cmd_subscribe,
    "accept-all": cmd_accept_all, "presence": cmd_presence, "listen": cmd_listen, "mam": cmd_mam,
    "upload": cmd_upload, "groupchat": cmd_groupchat,
}


def parse_args(argv):
    env = os.environ
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)

    def add_common(parser, suppress):
        # Connection options are accepted before and after the command; after it, they only
        # override what was given before (SUPPRESS keeps argparse from resetting to defaults).
        def opt(*names, **kw):
            if suppress:
                kw["default"] = argparse.SUPPRESS
            parser.add_argument(*names, **kw)

        opt("--as", dest="as_user", help="test account name (alice, bob, carol): JID and password from ROOST_TEST_<NAME>_JID/_PASSWORD")
        opt("--jid", help="full or bare JID to log in as")
        opt("--password", help="password (default: XMPP_PEER_PASSWORD, or ROOST_TEST_<NAME>_PASSWORD with --as)")
        opt("--host", default=env.get("ROOST_TEST_HOST", "127.0.0.1"))
        opt("--port", type=int, default=None, help="default ROOST_TEST_PORT (or ROOST_TEST_DIRECT_TLS_PORT with --direct-tls)")
        opt("--ca", default=env.get("ROOST_TEST_CA_FILE"), help="CA certificate file to trust")
        opt("--direct-tls", action="store_true", help="XEP-0368: TLS from the first byte instead of STARTTLS")
        opt("--resource", default="peer", help="resource to bind (default 'peer')")
        opt("--timeout", type=float, default=30, help="seconds for login and acknowledgements (default 30)")
        opt("--no-sm", action="store_true", help="do not enable stream management (XEP-0198)")
        opt("--no-initial-presence", action="store_true", help="stay invisible: send no presence after login")
        opt("--show-errors", action="store_true", help="listen also prints error messages")
        opt("--debug", action="store_true", help="slixmpp debug log (all XML) on stderr")
        opt("--register", action="store_true", help="create the account in-band (XEP-0077) before logging in")

    add_common(p, False)
    sub = p.add_subparsers(dest="command", required=True)

    def command(name):
        sp = sub.add_parser(name)
        add_common(sp, True)
        return sp

    def with_message_opts(sp):
        sp.add_argument("--type", default="chat", choices=("chat", "normal", "groupchat", "headline"))
        sp.add_argument("--id-prefix", default=None, help="message ids are <prefix>-1, <prefix>-2, ...")
        sp.add_argument("--drain", type=float, default=2, help="without stream management: seconds to wait before disconnecting")

    s = command("send"); s.add_argument("to"); s.add_argument("bodies", nargs="+", metavar="BODY")
    with_message_opts(s)
    s.add_argument("--thread"); s.add_argument("--chatstate", choices=CHAT_STATES)
    s.add_argument("--extra-xml", action="append", metavar="XML",
                   help="an element to add to each message, e.g. XEP-0447 file sharing (repeatable)")
    s = command("flood"); s.add_argument("to"); s.add_argument("count", type=int); with_message_opts(s)
    s.add_argument("--body-suffix", default="", help="appended to each body (to make messages larger)")
    s.add_argument("--rate", type=float, default=0, metavar="N", help="at most N messages a second (default: as fast as the server takes them)")
    s.add_argument("--chatstate-every", type=int, default=0, metavar="K",
                   help="after every K messages also send a standalone chat state (ids <prefix>-cs-1, ...)")
    s = command("chatstate"); s.add_argument("to"); s.add_argument("state", choices=CHAT_STATES)
    s.add_argument("--drain", type=float, default=1)
    s = command("subscribe"); s.add_argument("to")
    s.add_argument("--wait", type=float, default=0, help="seconds to wait for subscribed/unsubscribed")
    s.add_argument("--drain", type=float, default=1)
    s = command("accept-all"); s.add_argument("seconds", type=float, nargs="?", default=10)
    s = command("presence"); s.add_argument("show", choices=SHOWS); s.add_argument("status", nargs="?", default="")
    s.add_argument("--priority", type=int, default=0); s.add_argument("--hold", type=float, default=0, help="seconds to stay online")
    s.add_argument("--drain", type=float, default=1)
    s = command("listen"); s.add_argument("seconds", type=float)
    s.add_argument("--download", action="store_true", help="fetch each shared file and print its sha256")
    s = command("groupchat"); s.add_argument("room"); s.add_argument("nick")
    s.add_argument("bodies", nargs="*", metavar="BODY")
    s.add_argument("--id-prefix", default=None); s.add_argument("--drain", type=float, default=1)
    s.add_argument("--stay", type=float, default=0, help="seconds to stay in the room, printing messages")
    s = command("upload"); s.add_argument("to"); s.add_argument("file")
    s.add_argument("--body", help="message text (default: the URL itself)")
    s.add_argument("--service", help="upload service JID (default ROOST_TEST_UPLOAD_DOMAIN or upload.<domain>)")
    s = command("session"); s.add_argument("--drain", type=float, default=0.2)
    s = command("mam"); s.add_argument("--with", dest="with_jid"); s.add_argument("--max", type=int, default=1000)
    s.add_argument("--archive", help="whose archive to query, e.g. a room JID (default: the own account's)")
    add_muc_commands(command)

    args = p.parse_args(argv)
    if args.as_user:
        name = args.as_user.upper()
        args.jid = args.jid or env.get("ROOST_TEST_%s_JID" % name)
        args.password = args.password or env.get("ROOST_TEST_%s_PASSWORD" % name)
    args.password = args.password if args.password is not None else env.get("XMPP_PEER_PASSWORD")
    if not args.jid or args.password is None:
        p.error("give --jid and --password, or --as NAME with the server's env file loaded")
    if "/" not in args.jid:
        args.jid += "/" + args.resource
    if args.port is None:
        port = env.get("ROOST_TEST_DIRECT_TLS_PORT" if args.direct_tls else "ROOST_TEST_PORT")
        if not port:
            p.error("give --port, or load the server's env file (ROOST_TEST_PORT)")
        args.port = int(port)
    if not hasattr(args, "drain"):
        args.drain = 1
    return args


async def run(args):
    peer = Peer(args)
    peer.connect((args.host, args.port), use_ssl=args.direct_tls, force_starttls=not args.direct_tls)
    try:
        await asyncio.wait_for(peer.session_ready.wait(), args.timeout)
    except asyncio.TimeoutError:
        peer.fail("no session within %ss (is the server running on %s:%d?)" % (args.timeout, args.host, args.port))
    if peer.failure:
        peer.disconnect(wait=0)
        emit("error", message=peer.failure)
        sys.stderr.write("xmpp-peer: %s\n" % peer.failure)
        return 1
    status = 0
    try:
        await COMMANDS[args.command](peer, args)
    except (TimeoutError, ValueError, IqError, IqTimeout) as e:
        emit("error", message=str(e))
        sys.stderr.write("xmpp-peer: %s\n" % e)
        status = 1
    if peer.lost and status == 0:
        emit("error", message=peer.lost)
        sys.stderr.write("xmpp-peer: %s\n" % peer.lost)
        status = 1
    peer.listening = False
    peer.closing = True
    peer.disconnect(wait=2)
    try:
        await asyncio.wait_for(peer.disconnected, 5)
    except asyncio.TimeoutError:
        pass
    return status


# --- Group chats (issue 12): multi-user chat occupants, bookmarks, invitations, forged stanzas -----------------

BOOKMARKS_NS = "urn:xmpp:bookmarks:1"


def add_muc_commands(command):
    s = command("muc"); s.add_argument("room"); s.add_argument("nick")
    s.add_argument("--send", action="append", default=[], metavar="BODY", help="a message to the room (repeatable)")
    s.add_argument("--flood", type=int, default=0, help="N messages '<prefix> message i' with ids '<prefix>-i'")
    s.add_argument("--prefix", default="muc", help="body and id prefix of --flood (default muc)")
    s.add_argument("--origin-ids", action="store_true", help="give every message an XEP-0359 origin-id equal to its id")
    s.add_argument("--reference", help="mark the --send messages as mentioning this JID (XEP-0372)")
    s.add_argument("--delay", action="append", default=[], metavar="STAMP[,FROM]",
                   help="add this XEP-0203 <delay/> to the --send messages (forged times for security tests; repeatable)")
    s.add_argument("--subject", help="set the room's subject first")
    s.add_argument("--invite", action="append", default=[], metavar="JID", help="invite JID through the room (XEP-0045 mediated)")
    s.add_argument("--pm", action="append", default=[], metavar="NICK=BODY",
                   help="a private message to the occupant NICK (type chat to ROOM/NICK, with the muc#user <x/> clients add; repeatable)")
    s.add_argument("--pm-id", default=None, metavar="ID", help="the id of the --pm messages (default: a fresh one each)")
    s.add_argument("--kick", action="append", default=[], metavar="NICK", help="kick NICK (needs moderator rights: the room's creator)")
    s.add_argument("--react", action="append", default=[], metavar="ID=EMOJI[,EMOJI]",
                   help="react (XEP-0444, slixmpp's xep_0444) to the message with the room's stanza-id ID; ID= removes")
    s.add_argument("--retract", action="append", default=[], metavar="ID",
                   help="retract (XEP-0424, slixmpp's xep_0424) the message with the room's stanza-id ID")
    s.add_argument("--stay", type=float, default=0, help="seconds to stay in the room afterwards, printing messages")
    s.add_argument("--room-password", help="the room's password")
    s.add_argument("--no-archive", action="store_true", help="turn the room's archive (MAM) off (needs ownership: the room's creator)")
    s.add_argument("--drain", type=float, default=1)
    s = command("bookmark"); s.add_argument("room")
    s.add_argument("--autojoin", action="store_true"); s.add_argument("--nick"); s.add_argument("--name")
    s.add_argument("--room-password"); s.add_argument("--remove", action="store_true")
    s.add_argument("--legacy", action="store_true", help="XEP-0048 private XML storage instead of XEP-0402")
    s = command("invite"); s.add_argument("to"); s.add_argument("room")
    s.add_argument("--reason"); s.add_argument("--room-password"); s.add_argument("--drain", type=float, default=1)
    s = command("raw"); s.add_argument("stanzas", nargs="+", metavar="XML")


def muc_message(peer, room, body, msg_id, args):
    msg = peer.make_message(mto=room, mbody=body, mtype="groupchat")
    if msg_id:
        msg["id"] = msg_id
    xml = msg.xml
    if args.origin_ids:
        xml.append(ET.Element("{urn:xmpp:sid:0}origin-id", {"id": msg["id"]}))
    for delay in args.delay:
        stamp, _, stamp_from = delay.partition(",")
        xml.append(ET.Element("{urn:xmpp:delay}delay", {"stamp": stamp, **({"from": stamp_from} if stamp_from else {})}))
    if args.reference:
        xml.append(ET.Element("{urn:xmpp:reference:0}reference",
                              {"type": "mention", "uri": "xmpp:" + args.reference, "begin": "0", "end": "1"}))
    return msg


async def cmd_muc(peer, args):
    room = slixmpp.JID(args.room)
    muc = peer.plugin["xep_0045"]
    await muc.join_muc_wait(room, args.nick, maxstanzas=0, password=args.room_password, timeout=args.timeout)
    emit("joined", room=room.bare, nick=args.nick)
    if args.no_archive:
        # Turn the room's archive (XEP-0313) off through its configuration form, whatever the server calls the field.
        get = peer.make_iq_get(ito=room.bare)
        get.append(ET.fromstring("<query xmlns='http://jabber.org/protocol/muc#owner'/>"))
        form = await get.send(timeout=args.timeout)
        names = [f.get("var") for f in form.xml.iter("{jabber:x:data}field")]
        field = next((n for n in names if n in ("muc#roomconfig_enablearchiving", "muc#roomconfig_mam", "mam")), None)
        if field is None:
            raise RuntimeError("the room's configuration has no archiving field: %s" % names)
        submit = peer.make_iq_set(ito=room.bare)
        submit.append(ET.fromstring(
            "<query xmlns='http://jabber.org/protocol/muc#owner'><x xmlns='jabber:x:data' type='submit'>"
            "<field var='FORM_TYPE'><value>http://jabber.org/protocol/muc#roomconfig</value></field>"
            "<field var='%s'><value>0</value></field></x></query>" % field))
        await submit.send(timeout=args.timeout)
        emit("configured", room=room.bare, archive=False, field=field)
    peer.listening = args.stay > 0
    if args.subject:
        muc.set_subject(room, args.subject)
        emit("subject", room=room.bare, subject=args.subject)
    for nick in args.kick:
        await muc.set_role(room, nick, "none", reason="testing kicks")
        emit("kicked", room=room.bare, nick=nick)
    for i, body in enumerate(args.send):
        msg = muc_message(peer, room.bare, body, None, args)
        msg.send()
        emit("sent", to=room.bare, id=msg["id"], body=body)
    for i in range(1, args.flood + 1):
        muc_message(peer, room.bare, "%s message %d" % (args.prefix, i), "%s-%d" % (args.prefix, i), args).send()
        if i % 100 == 0:
            await asyncio.sleep(0)
    if args.flood:
        emit("flood", to=room.bare, count=args.flood)
    for spec in args.pm:
        nick, _, body = spec.partition("=")
        msg = peer.make_message(mto=slixmpp.JID(room.bare + "/" + nick), mbody=body, mtype="chat")
        if args.pm_id:
            msg["id"] = args.pm_id
        ET.SubElement(msg.xml, "{http://jabber.org/protocol/muc#user}x")
        msg.send()
        emit("sent", to=room.bare + "/" + nick, id=msg["id"], body=body)
    for spec in args.react:
        target, _, emojis = spec.partition("=")
        msg = peer.make_message(mto=room.bare, mtype="groupchat")
        msg["id"] = peer.new_id()
        peer.plugin["xep_0444"].set_reactions(msg, target, [e for e in emojis.split(",") if e])
        msg.enable("store")
        msg.send()
        emit("reacted", to=room.bare, id=target, reactions=emojis)
    for target in args.retract:
        peer.plugin["xep_0424"].send_retraction(room.bare, target, mtype="groupchat")
        emit("retracted", to=room.bare, id=target)
    for jid in args.invite:
        muc.invite(room, slixmpp.JID(jid), reason="come and see")
        emit("invited", room=room.bare, jid=jid)
    if await sm_drain(peer, args.timeout) is False:
        raise TimeoutError("the server did not acknowledge everything within %ss" % args.timeout)
    await asyncio.sleep(args.stay)
    muc.leave_muc(room, args.nick)


async def cmd_bookmark(peer, args):
    room = slixmpp.JID(args.room).bare
    if args.legacy:
        iq = peer.make_iq_get()
        iq.append(ET.fromstring("<query xmlns='jabber:iq:private'><storage xmlns='storage:bookmarks'/></query>"))
        answer = await iq.send(timeout=args.timeout)
        storage = answer.xml.find("{jabber:iq:private}query/{storage:bookmarks}storage")
        kept = [c for c in (storage if storage is not None else []) if c.get("jid") != room]
        new = ET.Element("{storage:bookmarks}storage")
        for c in kept:
            new.append(c)
        if not args.remove:
            c = ET.SubElement(new, "{storage:bookmarks}conference", {"jid": room, "autojoin": "true" if args.autojoin else "false"})
            if args.name:
                c.set("name", args.name)
            if args.nick:
                ET.SubElement(c, "{storage:bookmarks}nick").text = args.nick
            if args.room_password:
                ET.SubElement(c, "{storage:bookmarks}password").text = args.room_password
        iq = peer.make_iq_set()
        query = ET.Element("{jabber:iq:private}query")
        query.append(new)
        iq.append(query)
        await iq.send(timeout=args.timeout)
    elif args.remove:
        iq = peer.make_iq_set()
        iq.append(ET.fromstring(
            "<pubsub xmlns='http://jabber.org/protocol/pubsub'><retract node='%s' notify='true'><item id='%s'/></retract></pubsub>"
            % (BOOKMARKS_NS, room)))
        await iq.send(timeout=args.timeout)
    else:
        conference = ET.Element("{%s}conference" % BOOKMARKS_NS, {"autojoin": "true" if args.autojoin else "false"})
        if args.name:
            conference.set("name", args.name)
        if args.nick:
            ET.SubElement(conference, "{%s}nick" % BOOKMARKS_NS).text = args.nick
        if args.room_password:
            ET.SubElement(conference, "{%s}password" % BOOKMARKS_NS).text = args.room_password
        # XEP-0402 §3.2; ejabberd 23.01 refuses the optional max_items and send_last_published_item, so
        # those are tried first and left out when the server does not know them.
        for options in (("persist_items", "true"), ("max_items", "max"), ("send_last_published_item", "never"),
                        ("access_model", "whitelist")), (("persist_items", "true"), ("access_model", "whitelist")):
            pubsub = ET.fromstring(
                "<pubsub xmlns='http://jabber.org/protocol/pubsub'><publish node='%s'><item id='%s'/></publish>"
                "<publish-options><x xmlns='jabber:x:data' type='submit'>"
                "<field var='FORM_TYPE' type='hidden'><value>http://jabber.org/protocol/pubsub#publish-options</value></field>"
                "%s</x></publish-options></pubsub>" % (BOOKMARKS_NS, room, "".join(
                    "<field var='pubsub#%s'><value>%s</value></field>" % option for option in options)))
            pubsub.find("{http://jabber.org/protocol/pubsub}publish/{http://jabber.org/protocol/pubsub}item").append(conference)
            iq = peer.make_iq_set()
            iq.append(pubsub)
            try:
                await iq.send(timeout=args.timeout)
                break
            except IqError as e:
                if len(options) == 2:
                    raise
                sys.stderr.write("xmpp-peer: publish options refused (%s); trying the required ones only\n" % e.text)
    emit("bookmark", room=room, removed=args.remove or None, autojoin=args.autojoin, legacy=args.legacy or None)


async def cmd_invite(peer, args):
    # With a fallback body, as clients send it for those without XEP-0249 (and servers archive bodies).
    msg = peer.make_message(mto=args.to, mtype="normal",
                            mbody="%s invites you to %s" % (peer.boundjid.bare, slixmpp.JID(args.room).bare))
    x = ET.SubElement(msg.xml, "{jabber:x:conference}x", {"jid": slixmpp.JID(args.room).bare})
    if args.reason:
        x.set("reason", args.reason)
    if args.room_password:
        x.set("password", args.room_password)
    msg.send()
    emit("invited", to=args.to, room=slixmpp.JID(args.room).bare)
    await sm_drain(peer, args.timeout)


async def cmd_raw(peer, args):
    for stanza in args.stanzas:
        peer.send_raw(stanza)
        emit("sent", raw=stanza[:200])
    # The server handles a client's stanzas in order: once it answered this ping, it has routed the rest.
    await peer.plugin["xep_0199"].ping(jid=slixmpp.JID(peer.boundjid.domain), timeout=args.timeout)


COMMANDS.update({"muc": cmd_muc, "bookmark": cmd_bookmark, "invite": cmd_invite, "raw": cmd_raw})


def main():
    args = parse_args(sys.argv[1:])
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.ERROR,
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    sys.exit(asyncio.run(run(args)))


if __name__ == "__main__":
    main()
