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
  flood TO N               N messages "msg-1".."msg-N" with ids "<prefix>-1".., then wait until the
                           server acknowledged all of them (XEP-0198), or --drain seconds without SM
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
"""

import argparse
import asyncio
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
    from slixmpp.xmlstream.matcher import MatchXPath
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
    return fields


class Peer(slixmpp.ClientXMPP):
    def __init__(self, args):
        super().__init__(args.jid, args.password)
        self.args = args
        self.ca_certs = args.ca or None
        self.session_ready = asyncio.Event()
        self.failure = None
        # Set before connecting: pending subscription requests and offline messages arrive right
        # after the initial presence, before the command itself starts.
        self.listening = args.command in ("listen", "accept-all")
        self.auto_accept = args.command == "accept-all"
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
        if not args.no_sm:
            self.register_plugin("xep_0198", {"allow_resume": False})
        # Subscriptions are answered by us (accept-all) or left pending, never auto-approved.
        self.auto_authorize = None
        self.auto_subscribe = False
        self.add_event_handler("session_start", self.on_session_start)
        self.add_event_handler("failed_auth", lambda _: self.fail("authentication failed for %s" % args.jid))
        self.add_event_handler("connection_failed", lambda e: self.fail("connection failed: %s" % e))
        # A raw handler sees every message once; slixmpp's "message" event skips e.g. bare chat states.
        self.register_handler(Callback("xmpp-peer: every message",
                                       MatchXPath("{jabber:client}message"), self.on_message))
        self.add_event_handler("presence_subscribe", self.on_subscribe)
        self.add_event_handler("presence_subscribed", lambda p: self.on_presence("subscribed", p))
        self.add_event_handler("presence_unsubscribed", lambda p: self.on_presence("unsubscribed", p))
        self.add_event_handler("presence_available", lambda p: self.on_presence("available", p))
        self.add_event_handler("presence_unavailable", lambda p: self.on_presence("unavailable", p))

    def fail(self, reason):
        if self.failure is None:
            self.failure = reason
        self.session_ready.set()

    async def on_session_start(self, _event):
        emit("online", jid=str(self.boundjid))
        if not self.args.no_initial_presence:
            self.send_presence()
        # The roster must be requested for Prosody to treat us as an "interested resource"
        # that receives presence and subscription requests.
        try:
            await self.get_roster(timeout=self.args.timeout)
        except (IqError, IqTimeout) as e:
            self.fail("roster request failed: %s" % e)
            return
        self.session_ready.set()

    def on_message(self, msg):
        if self.listening and (msg["type"] != "error" or self.args.show_errors):
            fields = message_fields(msg)
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

    def on_presence(self, kind, pres):
        if self.listening and pres["from"] != self.boundjid:
            emit("presence", kind=kind, **{"from": str(pres["from"]), "show": pres["show"], "status": pres["status"]})

    def on_subscribe(self, pres):
        if self.listening:
            emit("presence", kind="subscribe", **{"from": str(pres["from"])})
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
    if sm is None or not sm.enabled_out:
        await asyncio.sleep(peer.args.drain)
        return None
    sm.request_ack()
    deadline = time.monotonic() + timeout
    last_request = time.monotonic()
    while sm.unacked_queue:
        if time.monotonic() > deadline:
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
    for i in range(1, args.count + 1):
        msg = peer.make_message(mto=args.to, mbody="msg-%d" % i, mtype=args.type)
        msg["id"] = "%s-%d" % (args.id_prefix or "flood", i)
        msg.send()
        if i % 500 == 0:
            await asyncio.sleep(0)  # let the send queue drain instead of buffering everything
    acked = await sm_drain(peer, args.timeout)
    emit("flood", to=args.to, count=args.count, acked=acked,
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


COMMANDS = {
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
        opt("--password", help="password (default: ROOST_TEST_<NAME>_PASSWORD with --as)")
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
    s = command("mam"); s.add_argument("--with", dest="with_jid"); s.add_argument("--max", type=int, default=1000)
    s.add_argument("--archive", help="whose archive to query, e.g. a room JID (default: the own account's)")

    args = p.parse_args(argv)
    if args.as_user:
        name = args.as_user.upper()
        args.jid = args.jid or env.get("ROOST_TEST_%s_JID" % name)
        args.password = args.password or env.get("ROOST_TEST_%s_PASSWORD" % name)
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
    peer.listening = False
    peer.disconnect(wait=2)
    try:
        await asyncio.wait_for(peer.disconnected, 5)
    except asyncio.TimeoutError:
        pass
    return status


def main():
    args = parse_args(sys.argv[1:])
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.ERROR,
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    sys.exit(asyncio.run(run(args)))


if __name__ == "__main__":
    main()
