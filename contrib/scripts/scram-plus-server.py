#!/usr/bin/python3
"""scram-plus-server.py: an XMPP endpoint just long enough to check a client's SCRAM-*-PLUS login.

Neither server of Debian 12 implements the tls-exporter (RFC 9266) or tls-server-end-point (RFC 5929)
channel bindings, nor XEP-0440, which lists the types a server accepts. This script does, independently of
Roost's code: TLS from pyOpenSSL (the exporter and the Finished messages come from the server side of the
session), SCRAM from Python's hashlib/hmac, written from RFC 5802. It serves one account on 127.0.0.1:
STARTTLS, SASL with the mechanisms and XEP-0440 types given, resource binding, an error answer to any other
IQ, and a clean close. One JSON line per login attempt goes to stdout:

  {"event": "listening", "port": P}
  {"event": "auth", "mechanism": "SCRAM-SHA-256-PLUS", "binding": "tls-exporter", "tls": "TLSv1.3",
   "ok": true}                                  (or "ok": false, "reason": "...")

usage: scram-plus-server.py --cert CRT --key KEY --domain D --user U --password P
                            [--tls 1.2|1.3] [--mechanisms M,...] [--bindings T,...]
"""

import argparse
import base64
import hashlib
import hmac
import json
import os
import re
import socket
import sys
import threading

from OpenSSL import SSL, crypto

HASHES = {"SHA-1": "sha1", "SHA-256": "sha256", "SHA-512": "sha512"}
STREAM = ("<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' "
          "from='%s' id='%s' version='1.0'>")


def emit(**fields):
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


class Stream:
    """Reads text from a plain or TLS socket and hands out complete top-level elements by regex (enough for
    the few elements a client sends here)."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = ""

    def send(self, text):
        self.sock.sendall(text.encode())

    def _more(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError
        self.buffer += data.decode("utf-8", "replace")

    def header(self):
        while True:
            match = re.search(r"<stream:stream[^>]*>", self.buffer)
            if match:
                self.buffer = self.buffer[match.end():]
                return
            self._more()

    def element(self):
        """The next element: (name, attributes, inner text) or ("/stream", {}, "")."""
        pattern = re.compile(r"\s*(?:<\?[^>]*\?>\s*)?(?:(</stream:stream>)|<([a-zA-Z:]+)((?:\s+[^>]*?)?)(?:/>|>(.*?)</\2>))", re.S)
        while True:
            match = pattern.match(self.buffer)
            if match:
                self.buffer = self.buffer[match.end():]
                if match.group(1):
                    return "/stream", {}, ""
                attributes = dict(re.findall(r"([a-zA-Z:]+)=[\"']([^\"']*)[\"']", match.group(3) or ""))
                return match.group(2), attributes, match.group(4) or ""
            self._more()


def attributes_of(text):
    return dict(pair.split("=", 1) for pair in text.split(",") if "=" in pair)


def serve(sock, args, context_for, certificate_der):
    stream = Stream(sock)
    stream.header()
    stream.send(STREAM % (args.domain, os.urandom(6).hex()) +
                "<stream:features><starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'><required/></starttls></stream:features>")
    name, _, _ = stream.element()
    if name != "starttls":
        return
    stream.send("<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>")
    tls = SSL.Connection(context_for(), sock)
    tls.set_accept_state()
    tls.do_handshake()
    stream = Stream(tls)
    stream.header()
    mechanisms = "".join("<mechanism>%s</mechanism>" % m for m in args.mechanisms)
    bindings = "".join("<channel-binding type='%s'/>" % t for t in args.bindings)
    stream.send(STREAM % (args.domain, os.urandom(6).hex()) +
                "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>%s</mechanisms>"
                "<sasl-channel-binding xmlns='urn:xmpp:sasl-cb:0'>%s</sasl-channel-binding></stream:features>"
                % (mechanisms, bindings))
    while not authenticate(stream, tls, args, certificate_der):
        pass
    stream.header()
    stream.send(STREAM % (args.domain, os.urandom(6).hex()) +
                "<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></stream:features>")
    while True:
        name, attributes, inner = stream.element()
        if name == "/stream":
            stream.send("</stream:stream>")
            return
        if name != "iq" or attributes.get("type") not in ("get", "set"):
            continue
        ident = attributes.get("id", "")
        resource = re.search(r"<resource>([^<]*)</resource>", inner)
        if "urn:ietf:params:xml:ns:xmpp-bind" in inner:
            stream.send("<iq type='result' id='%s'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>%s@%s/%s</jid></bind></iq>"
                        % (ident, args.user, args.domain, resource.group(1) if resource else "r"))
        else:
            stream.send("<iq type='error' id='%s'><error type='cancel'><service-unavailable "
                        "xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>" % ident)


def binding_data(kind, tls, certificate_der):
    if kind == "tls-exporter":
        return tls.export_keying_material(b"EXPORTER-Channel-Binding", 32, None)
    if kind == "tls-unique":
        return tls.get_peer_finished()  # the client's Finished: first in a full handshake
    if kind == "tls-server-end-point":
        return hashlib.sha256(certificate_der).digest()  # the certificate is signed with SHA-256
    raise ValueError("unknown channel binding %s" % kind)


def authenticate(stream, tls, args, certificate_der):
    """One SASL exchange; True on success."""
    name, attributes, inner = stream.element()
    if name != "auth":
        raise EOFError
    mechanism = attributes.get("mechanism", "")
    report = {"event": "auth", "mechanism": mechanism, "tls": tls.get_protocol_version_name()}

    def fail(reason):
        emit(ok=False, reason=reason, **report)
        stream.send("<failure xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><not-authorized/><text>%s</text></failure>" % reason)
        return False

    match = re.fullmatch(r"SCRAM-(SHA-1|SHA-256|SHA-512)(-PLUS)?", mechanism)
    if not match or mechanism not in args.mechanisms:
        return fail("mechanism not offered")
    digest = HASHES[match.group(1)]
    client_first = base64.b64decode(inner).decode()
    gs2_flag, _, rest = client_first.partition(",")
    _, _, client_first_bare = rest.partition(",")
    gs2_header = client_first[:len(client_first) - len(client_first_bare)]
    binding = gs2_flag[2:] if gs2_flag.startswith("p=") else None
    report["binding"] = binding
    if bool(binding) != bool(match.group(2)):
        return fail("-PLUS and the GS2 flag disagree")
    if binding and binding not in args.bindings:
        return fail("channel binding %s not offered" % binding)
    bare = attributes_of(client_first_bare)
    if bare.get("n") != args.user:
        return fail("unknown user")
    salt = os.urandom(16)
    nonce = bare["r"] + base64.b64encode(os.urandom(18)).decode()
    server_first = "r=%s,s=%s,i=4096" % (nonce, base64.b64encode(salt).decode())
    stream.send("<challenge xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>%s</challenge>" % base64.b64encode(server_first.encode()).decode())
    name, _, inner = stream.element()
    if name != "response":
        return fail("expected a response")
    client_final = base64.b64decode(inner).decode()
    without_proof, _, proof = client_final.rpartition(",p=")
    final = attributes_of(without_proof)
    expected_c = gs2_header.encode() + (binding_data(binding, tls, certificate_der) if binding else b"")
    if base64.b64decode(final.get("c", "")) != expected_c:
        return fail("channel binding data do not match")
    if final.get("r") != nonce:
        return fail("nonce mismatch")
    salted = hashlib.pbkdf2_hmac(digest, args.password.encode(), salt, 4096)
    client_key = hmac.new(salted, b"Client Key", digest).digest()
    stored_key = hashlib.new(digest, client_key).digest()
    auth_message = ("%s,%s,%s" % (client_first_bare, server_first, without_proof)).encode()
    signature = hmac.new(stored_key, auth_message, digest).digest()
    recovered = bytes(a ^ b for a, b in zip(base64.b64decode(proof), signature))
    if hashlib.new(digest, recovered).digest() != stored_key:
        return fail("wrong proof")
    server_key = hmac.new(salted, b"Server Key", digest).digest()
    verifier = hmac.new(server_key, auth_message, digest).digest()
    stream.send("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>%s</success>"
                % base64.b64encode(b"v=" + base64.b64encode(verifier)).decode())
    emit(ok=True, **report)
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--domain", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--password", default=os.environ.get("SCRAM_PLUS_PASSWORD"))
    parser.add_argument("--tls", choices=("1.2", "1.3"), default="1.3")
    parser.add_argument("--mechanisms", default="SCRAM-SHA-256-PLUS,SCRAM-SHA-256")
    parser.add_argument("--bindings", default="tls-exporter,tls-server-end-point")
    args = parser.parse_args()
    args.mechanisms = args.mechanisms.split(",")
    args.bindings = [b for b in args.bindings.split(",") if b]
    if args.password is None:
        parser.error("give --password or SCRAM_PLUS_PASSWORD")
    with open(args.cert, "rb") as f:
        certificate_der = crypto.dump_certificate(crypto.FILETYPE_ASN1, crypto.load_certificate(crypto.FILETYPE_PEM, f.read()))

    def context_for():
        context = SSL.Context(SSL.TLS_SERVER_METHOD)
        context.use_certificate_file(args.cert)
        context.use_privatekey_file(args.key)
        version = SSL.TLS1_3_VERSION if args.tls == "1.3" else SSL.TLS1_2_VERSION
        context.set_min_proto_version(version)
        context.set_max_proto_version(version)
        return context

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    emit(event="listening", port=listener.getsockname()[1])

    def handle(sock):
        try:
            serve(sock, args, context_for, certificate_der)
        except (EOFError, OSError, SSL.Error, ValueError):
            pass
        finally:
            sock.close()

    while True:
        sock, _ = listener.accept()
        threading.Thread(target=handle, args=(sock,), daemon=True).start()


if __name__ == "__main__":
    main()
