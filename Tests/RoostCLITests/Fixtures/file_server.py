#!/usr/bin/python3
"""file_server.py: an HTTP(S) file host for Roost's file tests, logging every request it gets.

    file_server.py --root DIR [--bind 127.0.0.1] [--port 0] [--tls CERT KEY]

Prints {"event": "listening", "port": N} once it listens, then one {"event": "request", ...} line per
request (stdout, flushed), so a test can prove a request did or did not reach it. Paths:
  /NAME          the file DIR/NAME; while DIR/.truncate exists, only its first half is sent after a
                 Content-Length of the whole (the server "goes down" mid-transfer)
  /loop/N        a redirect to /loop/N+1 (endless)
  /to/NAME       a redirect to /NAME
  /to-file       a redirect to file:///etc/passwd
  /trickle/NAME?rate=N   the file DIR/NAME (its whole Content-Length first), sent at N bytes a second; when the
                 client goes (or all is sent) a line {"event": "done", "path": ..., "sent": bytes} follows
"""
import argparse
import http.server
import json
import os
import ssl
import sys
import time
import urllib.parse


def emit(**fields):
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


class Handler(http.server.BaseHTTPRequestHandler):
    root = "."

    def log_message(self, *args):
        pass

    def do_GET(self):
        emit(event="request", method="GET", path=self.path, host=self.headers.get("Host"),
             cookie=self.headers.get("Cookie"), proxy=self.headers.get("Proxy-Authorization"))
        if self.path.startswith("/loop/"):
            return self.redirect("/loop/%d" % (int(self.path[6:] or 0) + 1))
        if self.path.startswith("/to/"):
            return self.redirect("/" + self.path[4:])
        if self.path == "/to-file":
            return self.redirect("file:///etc/passwd")
        if self.path.startswith("/trickle/"):
            return self.trickle()
        name = os.path.basename(self.path.split("?")[0])
        path = os.path.join(self.root, name)
        if not name or not os.path.isfile(path):
            self.send_error(404)
            return
        data = open(path, "rb").read()
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if os.path.exists(os.path.join(self.root, ".truncate")):
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(data)

    def trickle(self):
        parts = urllib.parse.urlsplit(self.path)
        rate = int(urllib.parse.parse_qs(parts.query).get("rate", ["2"])[0])
        data = open(os.path.join(self.root, os.path.basename(parts.path)), "rb").read()
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        sent = 0
        try:
            while sent < len(data):
                piece = data[sent:sent + max(1, rate // 4)]
                self.wfile.write(piece)
                self.wfile.flush()
                sent += len(piece)
                time.sleep(0.25)
        except OSError:
            pass
        emit(event="done", path=self.path, sent=sent)
        self.close_connection = True

    def redirect(self, location):
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--bind", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    args = p.parse_args()
    Handler.root = args.root
    server = http.server.ThreadingHTTPServer((args.bind, args.port), Handler)
    if args.tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*args.tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    emit(event="listening", port=server.server_address[1])
    server.serve_forever()


if __name__ == "__main__":
    main()
