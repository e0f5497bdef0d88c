#!/usr/bin/python3
"""web_client.py: an HTTP client of the web view (`roost serve`) for the hostile-input tests, Python's own sockets
and http.client, independent of Roost. Prints one JSON object (stdout) with what it saw.

    web_client.py hold --port P --count N --seconds S [--ready FILE]
        opens N TCP connections as fast as it can and sends nothing; then watches them for S seconds and says how many
        connected, how many the server closed within 3 s (refused at once), how many it held, how many of those it
        closed later (idle) and how many were never closed.
    web_client.py get --url URL [--path P] [--header NAME:VALUE]...
        opens URL (the address with its access token; the forwarding page sets the cookie), then GET P with the cookie:
        status, headers, body (text) and its length.
    web_client.py post --url URL --page P --action A [--field NAME=VALUE]...
        as get, reads the form token (csrf) from page P, then POSTs the fields (and the token) to A: status, Location.
    web_client.py events --url URL --path P --seconds S [--ready FILE] [--stop-at TEXT]
        reads the event stream at P for S seconds and splits it as a browser does (CR, LF and CRLF all end a line):
        every event with its fields. --ready: a file made once the response's head has come (the stream is open);
        --stop-at: stop reading once the event holding TEXT has come whole (S is then the most it waits).
    web_client.py stall --url URL --path P --seconds S [--until FILE]
        opens the event stream at P with a small receive buffer and reads nothing for S seconds, or until FILE exists
        if given (at most S seconds; a tab asleep), then reads what is there: whether the server closed the stream
        meanwhile, and how many bytes had come.
"""
import argparse
import http.client
import json
import os
import re
import socket
import sys
import time
import urllib.parse


def emit(**fields):
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def hold(args):
    sockets = []
    failed = 0
    for _ in range(args.count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(5)
        try:
            s.connect(("127.0.0.1", args.port))
            s.setblocking(False)
            sockets.append(s)
        except OSError:
            failed += 1
            s.close()
    if args.ready:
        open(args.ready, "w").close()

    def closed(s):
        try:
            return s.recv(1) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True

    # Refused at once: closed within 3 s of the last connection made (the server refuses as it accepts). Closed later:
    # by a deadline of the server (10 s without a request).
    time.sleep(3)
    open_sockets = []
    closed_at_once = closed_later = 0
    for s in sockets:
        if closed(s):
            closed_at_once += 1
            s.close()
        else:
            open_sockets.append(s)
    held = len(open_sockets)
    deadline = time.monotonic() + args.seconds
    while open_sockets and time.monotonic() < deadline:
        still = []
        for s in open_sockets:
            if closed(s):
                closed_later += 1
                s.close()
            else:
                still.append(s)
        open_sockets = still
        time.sleep(0.1)
    emit(connected=len(sockets), failed=failed, closed_at_once=closed_at_once, held=held, closed_later=closed_later,
         still_open=len(open_sockets))


class Session:
    """The browser's part: the token, then the cookie."""

    def __init__(self, url):
        parts = urllib.parse.urlsplit(url)
        self.host, self.port = parts.hostname, parts.port
        self.cookie = None
        status, headers, body = self.request("GET", parts.path + "?" + parts.query)
        for name, value in headers:
            if name.lower() == "set-cookie":
                self.cookie = value.split(";")[0]
        if status != 200 or not self.cookie:
            raise SystemExit("the token was not taken: %d %r" % (status, headers))

    def request(self, method, path, body=None, headers=None):
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        all_headers = {"Host": "%s:%d" % (self.host, self.port)}
        if self.cookie:
            all_headers["Cookie"] = self.cookie
        all_headers.update(headers or {})
        connection.request(method, path, body=body, headers=all_headers)
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response.status, response.getheaders(), data


def get(args):
    session = Session(args.url)
    headers = dict(h.split(":", 1) for h in args.header or [])
    status, response_headers, body = session.request("GET", args.path, headers=headers)
    emit(status=status, headers={k.lower(): v for k, v in response_headers}, length=len(body),
         body=body.decode("utf-8", "replace"))


def post(args):
    session = Session(args.url)
    status, _, page = session.request("GET", args.page)
    match = re.search(r'name="csrf" value="([^"]+)"', page.decode("utf-8", "replace"))
    if status != 200 or not match:
        raise SystemExit("no form token on %s (%d)" % (args.page, status))
    fields = [("csrf", match.group(1))] + [tuple(f.split("=", 1)) for f in args.field or []]
    body = "&".join("%s=%s" % (urllib.parse.quote(k, safe=""), v) for k, v in fields)
    status, headers, data = session.request("POST", args.action, body=body,
                                            headers={"Content-Type": "application/x-www-form-urlencoded"})
    emit(status=status, headers={k.lower(): v for k, v in headers}, length=len(data))


def open_stream(session, path, receive_buffer=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if receive_buffer:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    s.connect((session.host, session.port))
    request = "GET %s HTTP/1.1\r\nHost: %s:%d\r\nCookie: %s\r\nAccept: text/event-stream\r\n\r\n" % (
        path, session.host, session.port, session.cookie)
    s.sendall(request.encode())
    return s


def dechunk(raw):
    """The body of a chunked HTTP response (as far as it came)."""
    head, _, rest = raw.partition(b"\r\n\r\n")
    body = b""
    while rest:
        size_line, sep, rest = rest.partition(b"\r\n")
        if not sep:
            break
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        body += rest[:size]
        rest = rest[size + 2:]
    return head, body


def events(args):
    session = Session(args.url)
    s = open_stream(session, args.path)
    s.settimeout(0.2)
    raw = b""
    deadline = time.monotonic() + args.seconds
    ready = False
    while time.monotonic() < deadline:
        try:
            data = s.recv(65536)
            if not data:
                break
            raw += data
        except socket.timeout:
            continue
        if args.ready and not ready and b"\r\n\r\n" in raw:
            ready = True
            open(args.ready, "w").close()
        if args.stop_at:
            # Its whole event: the text, then the empty line that ends the event.
            body = dechunk(raw)[1]
            at = body.find(args.stop_at.encode())
            if at >= 0 and b"\n\n" in body[at:]:
                break
    s.close()
    head, body = dechunk(raw)
    text = body.decode("utf-8", "replace")
    # The event-stream syntax: a line ends at CR LF, LF or CR; an empty line ends an event.
    parsed, current = [], []
    for line in re.split(r"\r\n|\r|\n", text):
        if line == "":
            if current:
                parsed.append(current)
            current = []
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            current.append([name, value[1:] if value.startswith(" ") else value])
    emit(status=head.split(b"\r\n")[0].decode(), events=parsed, bytes=len(body))


def stall(args):
    session = Session(args.url)
    s = open_stream(session, args.path, receive_buffer=4096)
    deadline = time.monotonic() + args.seconds
    if args.until:
        while time.monotonic() < deadline and not os.path.exists(args.until):
            time.sleep(0.1)
    else:
        time.sleep(args.seconds)
    s.settimeout(10)
    received = 0
    closed = False
    try:
        while True:
            data = s.recv(65536)
            if not data:
                closed = True
                break
            received += len(data)
    except socket.timeout:
        pass
    except OSError:
        closed = True
    emit(closed=closed, received=received)


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("hold")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--ready", help="a file made once every connection is open")
    p = commands.add_parser("get")
    p.add_argument("--url", required=True)
    p.add_argument("--path", default="/")
    p.add_argument("--header", action="append")
    p = commands.add_parser("post")
    p.add_argument("--url", required=True)
    p.add_argument("--page", required=True)
    p.add_argument("--action", required=True)
    p.add_argument("--field", action="append")
    for name in ("events", "stall"):
        p = commands.add_parser(name)
        p.add_argument("--url", required=True)
        p.add_argument("--path", required=True)
        p.add_argument("--seconds", type=float, required=True)
        p.add_argument("--until")
        if name == "events":
            p.add_argument("--ready")
            p.add_argument("--stop-at")
    args = parser.parse_args()
    {"hold": hold, "get": get, "post": post, "events": events, "stall": stall}[args.command](args)


if __name__ == "__main__":
    main()
