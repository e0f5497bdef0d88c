#!/usr/bin/python3
"""Loopback HTTP server for webhook tests: prints its port, appends each POST as a JSON line to LOG,
and answers STATUS (default 500) to the first FAILURES requests, then 200.

usage: webhook_server.py LOG FAILURES [STATUS]"""
import http.server
import json
import sys

log_path, failures = sys.argv[1], int(sys.argv[2])
failure_status = int(sys.argv[3]) if len(sys.argv) > 3 else 500
seen = 0


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        global seen
        body = self.rfile.read(int(self.headers.get('Content-Length', 0)))
        seen += 1
        with open(log_path, 'a', encoding='utf-8') as log:
            log.write(json.dumps({'path': self.path, 'headers': dict(self.headers.items()),
                                  'body': body.decode('utf-8')}) + '\n')
        self.send_response(failure_status if seen <= failures else 200)
        self.send_header('Content-Length', '0')
        self.end_headers()

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(('127.0.0.1', 0), Handler)
print(server.server_port, flush=True)
server.serve_forever()
