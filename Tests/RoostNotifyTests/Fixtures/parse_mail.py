#!/usr/bin/python3
"""Parses a stored mail with Python's email package and prints what the tests check, as JSON."""
import email
import email.policy
import email.utils
import json
import sys

with open(sys.argv[1], 'rb') as f:
    message = email.message_from_binary_file(f, policy=email.policy.default)
name, address = email.utils.parseaddr(str(message['From']))
print(json.dumps({
    'subject': str(message['Subject']),
    'from_name': message['From'].addresses[0].display_name,
    'from_address': message['From'].addresses[0].addr_spec,
    'to': str(message['To']),
    'content_type': message.get_content_type(),
    'charset': message.get_content_charset(),
    'body': message.get_content(),
    'defects': [type(d).__name__ for d in message.defects],
    'has_date': message['Date'] is not None,
    'has_message_id': message['Message-ID'] is not None,
}))
