#!/usr/bin/env python3
"""omemo-peer.py: an independent OMEMO client (slixmpp-omemo, PyPI) as the other side of Roost's tests.

Runs in the virtualenv contrib/scripts/test creates (slixmpp 1.17 + slixmpp-omemo 2.2.0 with both the
oldmemo (0.3) and twomemo (OMEMO 2) backends). Logs in, publishes its OMEMO device (keys kept in --data, a
JSON file with a journal of changes beside it, so a later run is the same device), does one thing, and exits. What it observes goes to stdout
as JSON lines; diagnostics to stderr. Exit status: 0 success, 1 failure, 2 usage error.

slixmpp-omemo 2.2.0 has no XEP-0420 (SCE) support, so for OMEMO 2 this script builds and unpacks the
`<envelope/>` itself and calls the session manager directly.

Commands:
  setup                              publish the device and exit (prints its id and fingerprint)
  send TO BODY...                    one encrypted message per BODY (--namespace oldmemo|twomemo)
  flood TO N                         N encrypted messages "<prefix>-1".."<prefix>-N"
  listen SECONDS                     print every decrypted message (and undecryptable ones) for SECONDS
  devices JID                        print JID's device lists in both namespaces
  room ROOM NICK BODY... [--stay S] join ROOM (made non-anonymous, as OMEMO in rooms needs), wait until every
                                     --for JID is an occupant, and send one encrypted group chat message per
                                     BODY, encrypted for those JIDs' devices (as Conversations and Dino do for
                                     a room's members)

  --corrupt payload|key              damage what is sent: flip a payload byte (bad MAC) or a key byte
"""

import argparse
import asyncio
import atexit
import base64
import json
import logging
import os
import random
import string
import sys
import time
import xml.etree.ElementTree as ET

try:
    import slixmpp
    from slixmpp.plugins import register_plugin
    from slixmpp.xmlstream.handler import CoroutineCallback
    from slixmpp.xmlstream.matcher import MatchXPath
    from omemo.storage import Just, Nothing, Storage
    import oldmemo
    import oldmemo.etree
    import twomemo
    import twomemo.etree
    from slixmpp_omemo import XEP_0384
except ImportError as e:
    sys.stderr.write("omemo-peer: %s; run it with the virtualenv python contrib/scripts/test makes "
                     "(pip install slixmpp-omemo==2.2.0)\n" % e)
    sys.exit(1)

NAMESPACES = {"oldmemo": oldmemo.oldmemo.NAMESPACE, "twomemo": twomemo.twomemo.NAMESPACE}
SCE = "urn:xmpp:sce:1"


def emit(event, **fields):
    sys.stdout.write(json.dumps({"event": event, **fields}, ensure_ascii=False) + "\n")
    sys.stdout.flush()


class JSONStorage(Storage):
    """python-omemo's storage in a JSON file. Each change is appended to a journal beside it (PATH.log, one JSON
    line per change, written through at once: a SIGKILL loses nothing), and the file is rewritten from the journal
    when the peer exits or next starts. Rewriting the whole file at every change (two dozen per encrypted message)
    took 97 % of a flood's time on a loaded machine: 200 messages in 76 s, most of it in rename()."""

    def __init__(self, path):
        super().__init__()
        self.path = path
        self.journal_path = path + ".log"
        self.data = {}
        if os.path.exists(path):
            with open(path, encoding="utf8") as f:
                self.data = json.load(f)
        if os.path.exists(self.journal_path):
            with open(self.journal_path, encoding="utf8") as f:
                for line in f:
                    try:
                        change = json.loads(line)
                    except ValueError:
                        break  # the last line, cut short by a kill: every change before it is whole
                    if "value" in change:
                        self.data[change["key"]] = change["value"]
                    else:
                        self.data.pop(change["key"], None)
            self._compact()
        self.journal = open(self.journal_path, "a", encoding="utf8")
        atexit.register(self.close)

    async def _load(self, key):
        return Just(self.data[key]) if key in self.data else Nothing()

    async def _store(self, key, value):
        self.data[key] = value
        self._append({"key": key, "value": value})

    async def _delete(self, key):
        self.data.pop(key, None)
        self._append({"key": key})

    def _append(self, change):
        self.journal.write(json.dumps(change) + "\n")
        self.journal.flush()

    def _compact(self):
        """The whole state into the file, then the journal goes (replaying it again would change nothing)."""
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf8") as f:
            json.dump(self.data, f)
        os.replace(tmp, self.path)
        if os.path.exists(self.journal_path):
            os.unlink(self.journal_path)

    def close(self):
        if not self.journal.closed:
            self.journal.close()
            self._compact()


class OMEMOPlugin(XEP_0384):
    default_config = {"fallback_message": "This message is OMEMO encrypted.", "json_file_path": None}

    def plugin_init(self):
        self._storage = JSONStorage(self.json_file_path)
        super().plugin_init()

    @property
    def storage(self):
        return self._storage

    @property
    def _btbv_enabled(self):
        return True

    async def _devices_blindly_trusted(self, blindly_trusted, identifier):
        pass

    async def _prompt_manual_trust(self, manually_trusted, identifier):
        raise RuntimeError("manual trust needed for %s" % manually_trusted)


register_plugin(OMEMOPlugin)


def envelope(body, sender, recipient):
    """XEP-0420 envelope with a body, random padding, time, to and from."""
    env = ET.Element("{%s}envelope" % SCE)
    content = ET.SubElement(env, "{%s}content" % SCE)
    ET.SubElement(content, "{jabber:client}body").text = body
    ET.SubElement(env, "{%s}rpad" % SCE).text = "".join(random.choice(string.ascii_letters) for _ in range(random.randint(0, 50)))
    ET.SubElement(env, "{%s}time" % SCE, stamp=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    ET.SubElement(env, "{%s}to" % SCE, jid=recipient)
    ET.SubElement(env, "{%s}from" % SCE, jid=sender)
    return ET.tostring(env, encoding="utf-8")


class Peer(slixmpp.ClientXMPP):
    def __init__(self, args):
        super().__init__(args.jid, args.password)
        self.args = args
        self.ca_certs = args.ca or None
        self.ready = asyncio.Event()
        self.failure = None
        self.use_message_ids = True
        # The test server offers STARTTLS on the given port; slixmpp 1.17 would try direct TLS first.
        self.enable_direct_tls = False
        self.register_plugin("xep_0030")
        self.register_plugin("xep_0060")
        self.register_plugin("xep_0163")
        self.register_plugin("xep_0380")
        self.register_plugin("xep_0045")
        self.register_plugin("xep_0198", {"allow_resume": False})
        self.register_plugin("xep_0384", {"json_file_path": args.data}, module=sys.modules[__name__])
        self.add_event_handler("session_start", self.on_start)
        self.add_event_handler("failed_auth", lambda _: self.fail("authentication failed"))
        self.add_event_handler("connection_failed", lambda e: self.fail("connection failed: %s" % e))
        self.register_handler(CoroutineCallback("omemo-peer: messages", MatchXPath("{jabber:client}message"), self.on_message))
        # listen: from the start, so that what the server delivers right after login (offline storage) is heard too.
        self.listening = args.command == "listen"
        self.refreshed = set()

    def fail(self, reason):
        self.failure = self.failure or reason
        self.ready.set()

    async def on_start(self, _):
        self.send_presence(ppriority=self.args.priority)
        await self.get_roster()
        manager = await self["xep_0384"].get_session_manager()
        info = (await manager.get_own_device_information())[0]
        emit("online", jid=str(self.boundjid), device=info.device_id)
        self.ready.set()

    async def on_message(self, stanza):
        if not self.listening:
            return
        xep = self["xep_0384"]
        inner = stanza
        carbon = None
        for kind in ("received", "sent"):
            wrapper = stanza.xml.find("{urn:xmpp:carbons:2}%s" % kind)
            if wrapper is not None:
                forwarded = wrapper.find("{urn:xmpp:forward:0}forwarded/{jabber:client}message")
                if forwarded is None:
                    return
                inner = slixmpp.Message(self, forwarded)
                carbon = kind
        sender = inner["from"].bare
        if inner["type"] == "groupchat":
            # A room message: the sender's sessions are those of the occupant's real JID (non-anonymous room).
            room, nick = inner["from"].bare, inner["from"].resource
            if self.args.command == "room" and nick == self.args.rest[1]:
                return  # our own, reflected
            sender = slixmpp.JID(self["xep_0045"].get_jid_property(room, nick, "jid") or "").bare
        if not xep.is_encrypted(inner):
            if inner["body"]:
                emit("plain", sender=str(inner["from"]), body=inner["body"], carbon=carbon)
            return
        try:
            body, namespace, device = await self.decrypt(inner, sender)
            if body is not None:
                emit("message", sender=str(inner["from"]), body=body, namespace=namespace, device=device, carbon=carbon)
        except Exception as e:
            emit("undecryptable", sender=str(inner["from"]), error="%s: %s" % (type(e).__name__, e), carbon=carbon)

    async def decrypt(self, stanza, sender):
        manager = await self["xep_0384"].get_session_manager()
        two = stanza.xml.find("{%s}encrypted" % twomemo.twomemo.NAMESPACE)
        if two is not None:
            message = twomemo.etree.parse_message(two, sender)
            plaintext, device = (await manager.decrypt(message))[:2]
            if plaintext is None:
                return None, "twomemo", device.device_id
            env = ET.fromstring(plaintext)
            body = env.find("{%s}content/{jabber:client}body" % SCE)
            return (body.text if body is not None else None), "twomemo", device.device_id
        old = stanza.xml.find("{%s}encrypted" % oldmemo.oldmemo.NAMESPACE)
        message = await oldmemo.etree.parse_message(old, sender, self.boundjid.bare, manager)
        plaintext, device = (await manager.decrypt(message))[:2]
        return (plaintext.decode("utf-8") if plaintext is not None else None), "oldmemo", device.device_id

    async def encrypted(self, to, body, members=None):
        """One encrypted message stanza for `to` (and the account's other devices) in --namespace; for a room,
        `to` is the room and `members` the real JIDs it is encrypted for."""
        xep = self["xep_0384"]
        namespace = NAMESPACES[self.args.namespace]
        recipient = slixmpp.JID(to)
        readers = [slixmpp.JID(j) for j in members] if members else [recipient]
        for reader in readers:
            if reader.bare not in self.refreshed:
                # Read the device lists now, not from an earlier run's cache: Roost's device may be new.
                await xep.refresh_device_lists({reader, slixmpp.JID(self.boundjid.bare)}, force_download=True)
                self.refreshed.add(reader.bare)
        manager = await xep.get_session_manager()
        if namespace == twomemo.twomemo.NAMESPACE:
            plaintext = envelope(body, self.boundjid.bare, recipient.bare)
        else:
            plaintext = body.encode("utf-8")
        messages, errors = await manager.encrypt(frozenset(r.bare for r in readers), {namespace: plaintext},
                                                 backend_priority_order=[namespace])
        if errors:
            sys.stderr.write("omemo-peer: encryption errors: %s\n" % (errors,))
        stanza = self.make_message(mto=recipient, mtype="groupchat" if members else "chat")
        stanza["body"] = "This message is OMEMO encrypted."
        stanza.enable("store")
        for message in messages:
            element = (twomemo.etree.serialize_message(message) if message.namespace == twomemo.twomemo.NAMESPACE
                       else oldmemo.etree.serialize_message(message))
            self.corrupt(element, message.namespace)
            stanza.append(element)
        stanza["eme"]["namespace"] = namespace
        stanza["eme"]["name"] = "OMEMO"
        origin = ET.SubElement(stanza.xml, "{urn:xmpp:sid:0}origin-id")
        origin.set("id", stanza["id"])
        return stanza

    def corrupt(self, element, namespace):
        what = self.args.corrupt
        if not what:
            return
        # The payload, or every recipient device's key (the first alone may be another device's than Roost's).
        nodes = [element.find("{%s}payload" % namespace)] if what == "payload" else list(element.iter("{%s}key" % namespace))
        for node in nodes:
            data = bytearray(base64.b64decode(node.text))
            data[len(data) // 2] ^= 0x5A
            node.text = base64.b64encode(bytes(data)).decode()


async def drain(peer, timeout=60):
    """Waits until the server acknowledged every stanza sent (XEP-0198); fails the run otherwise."""
    sm = peer.plugin["xep_0198"] if "xep_0198" in peer.plugin else None
    if sm is None or not sm.enabled_out:
        raise RuntimeError("the server did not enable stream management; cannot know that every message arrived")
    deadline = time.monotonic() + timeout
    # send() only queues: the stream management plugin counts a stanza once it is written out.
    while not peer.waiting_queue.empty():
        if time.monotonic() > deadline:
            raise TimeoutError("the send queue did not empty within %ss" % timeout)
        await asyncio.sleep(0.05)
    sm.request_ack()
    last_request = time.monotonic()
    while sm.unacked_queue:
        if time.monotonic() > deadline:
            raise TimeoutError("the server did not acknowledge all messages within %ss" % timeout)
        if time.monotonic() - last_request > 1:
            sm.request_ack()
            last_request = time.monotonic()
        await asyncio.sleep(0.05)


async def main(args):
    peer = Peer(args)
    peer.connect(host=args.host, port=args.port)
    try:
        await asyncio.wait_for(peer.ready.wait(), args.timeout)
    except asyncio.TimeoutError:
        peer.fail("no session within %ss" % args.timeout)
    if peer.failure:
        sys.stderr.write("omemo-peer: %s\n" % peer.failure)
        return 1
    status = 0
    if args.command == "send":
        for body in args.rest[1:]:
            stanza = await peer.encrypted(args.rest[0], body)
            stanza.send()
            emit("sent", to=args.rest[0], id=stanza["id"], body=body)
    elif args.command == "flood":
        to, count = args.rest[0], int(args.rest[1])
        started = time.monotonic()
        for i in range(1, count + 1):
            stanza = await peer.encrypted(to, "%s-%d %s" % (args.prefix, i, "secret"))
            stanza["id"] = "%s-%d" % (args.prefix, i)
            stanza.xml.find("{urn:xmpp:sid:0}origin-id").set("id", stanza["id"])
            stanza.send()
            if i % 100 == 0:
                emit("progress", sent=i, seconds=round(time.monotonic() - started, 1))
                await drain(peer)
                emit("acknowledged", sent=i, seconds=round(time.monotonic() - started, 1))
        emit("sent", count=count, seconds=round(time.monotonic() - started, 1))
    elif args.command == "room":
        room, nick, bodies = slixmpp.JID(args.rest[0]).bare, args.rest[1], args.rest[2:]
        muc = peer["xep_0045"]
        await muc.join_muc_wait(slixmpp.JID(room), nick, maxstanzas=0, timeout=args.timeout)
        # Non-anonymous: every occupant sees every other's real JID (whose devices to encrypt for, and whose
        # sessions decrypt). A partial form: the server keeps the other settings.
        configure = peer.make_iq_set(ito=room)
        configure.append(ET.fromstring(
            "<query xmlns='http://jabber.org/protocol/muc#owner'><x xmlns='jabber:x:data' type='submit'>"
            "<field var='FORM_TYPE'><value>http://jabber.org/protocol/muc#roomconfig</value></field>"
            "<field var='muc#roomconfig_whois'><value>anyone</value></field></x></query>"))
        await configure.send(timeout=args.timeout)
        emit("joined", room=room, nick=nick)
        deadline = time.monotonic() + args.timeout
        wanted = {slixmpp.JID(j).bare for j in args.members}
        while True:
            present = {slixmpp.JID(muc.get_jid_property(room, n, "jid") or "").bare for n in muc.get_roster(room) or []}
            if wanted <= present:
                break
            if time.monotonic() > deadline:
                raise TimeoutError("%s did not join %s within %ss (present: %s)" % (sorted(wanted - present), room, args.timeout, sorted(present)))
            await asyncio.sleep(0.1)
        emit("members", room=room, jids=sorted(wanted))
        for i, body in enumerate(bodies, 1):
            stanza = await peer.encrypted(room, body, members=sorted(wanted))
            stanza["id"] = "%s-%d" % (args.prefix, i)
            stanza.xml.find("{urn:xmpp:sid:0}origin-id").set("id", stanza["id"])
            stanza.send()
            emit("sent", to=room, id=stanza["id"], body=body)
        await drain(peer)
        peer.listening = args.stay > 0
        await asyncio.sleep(args.stay)
        muc.leave_muc(slixmpp.JID(room), nick)
    elif args.command == "listen":
        await asyncio.sleep(float(args.rest[0]))
    elif args.command == "devices":
        xep = peer["xep_0384"]
        await xep.refresh_device_lists({slixmpp.JID(args.rest[0])}, force_download=True)
        manager = await xep.get_session_manager()
        for info in await manager.get_device_information(args.rest[0]):
            emit("device", jid=args.rest[0], device=info.device_id, namespaces=sorted(info.namespaces),
                 active=sorted(ns for ns, on in info.active.items() if on) if isinstance(info.active, dict) else None)
    await drain(peer)
    await peer.disconnect()
    return status


def parse():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["setup", "send", "flood", "listen", "devices", "room"])
    parser.add_argument("rest", nargs="*")
    parser.add_argument("--as", dest="user", help="alice, bob or carol: JID and password from the test server's env")
    parser.add_argument("--jid")
    parser.add_argument("--password")
    parser.add_argument("--resource", default="omemo-peer")
    parser.add_argument("--data", required=True, help="JSON file keeping this device's OMEMO state")
    parser.add_argument("--namespace", choices=sorted(NAMESPACES), default="oldmemo")
    parser.add_argument("--corrupt", choices=["payload", "key"])
    parser.add_argument("--prefix", default="omemo")
    parser.add_argument("--for", dest="members", action="append", default=[], metavar="JID",
                        help="room: a member whose devices the messages are encrypted for (repeatable)")
    parser.add_argument("--stay", type=float, default=0, metavar="SECONDS",
                        help="room: stay SECONDS after sending, printing the (decrypted) messages of the room")
    parser.add_argument("--priority", type=int, default=0)
    parser.add_argument("--host", default=os.environ.get("ROOST_TEST_HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("ROOST_TEST_PORT", "5222")))
    parser.add_argument("--ca", default=os.environ.get("ROOST_TEST_CA_FILE"))
    parser.add_argument("--timeout", type=float, default=30)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    if args.user:
        upper = args.user.upper()
        args.jid = args.jid or os.environ.get("ROOST_TEST_%s_JID" % upper)
        args.password = args.password or os.environ.get("ROOST_TEST_%s_PASSWORD" % upper)
    if not args.jid or not args.password:
        parser.error("--jid and --password (or --as USER) are required")
    args.jid = "%s/%s" % (args.jid.split("/")[0], args.resource)
    needs = {"send": 2, "flood": 2, "listen": 1, "devices": 1, "setup": 0, "room": 3}[args.command]
    if len(args.rest) < needs:
        parser.error("%s needs %d argument(s)" % (args.command, needs))
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.ERROR, stream=sys.stderr)
    return args


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse())))
