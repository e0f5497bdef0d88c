#!/usr/bin/python3
"""Loopback SMTP server (aiosmtpd) for e-mail tests: prints its port and stores each message in DIR."""
import os
import socket
import sys
import time

from aiosmtpd.controller import Controller

directory = sys.argv[1]


class Store:
    count = 0

    async def handle_DATA(self, server, session, envelope):
        Store.count += 1
        with open(os.path.join(directory, f'{Store.count}.eml'), 'wb') as mail:
            mail.write(envelope.original_content)
        with open(os.path.join(directory, f'{Store.count}.envelope'), 'w') as info:
            info.write(envelope.mail_from + '\n' + '\n'.join(envelope.rcpt_tos) + '\n')
        return '250 OK'


probe = socket.socket()
probe.bind(('127.0.0.1', 0))
port = probe.getsockname()[1]
probe.close()
controller = Controller(Store(), hostname='127.0.0.1', port=port)
controller.start()
print(port, flush=True)
while True:
    time.sleep(3600)
