#!/usr/bin/python3
"""mbox_attachments.py MBOX: every attachment of every mail, read by Python's mailbox and email packages,
as JSON lines {"filename", "content_type", "bytes", "sha256"}."""
import hashlib
import json
import mailbox
import sys

for message in mailbox.mbox(sys.argv[1]):
    for part in message.walk():
        if part.get_content_disposition() == "attachment":
            payload = part.get_payload(decode=True) or b""
            print(json.dumps({"filename": part.get_filename(), "content_type": part.get_content_type(),
                              "bytes": len(payload), "sha256": hashlib.sha256(payload).hexdigest()}))
