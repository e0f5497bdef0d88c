#!/usr/bin/python3
"""A command sink program for tests: writes its ROOST_* environment, arguments and stdin to OUT as JSON."""
import json
import os
import sys

out = sys.argv[1]
with open(out, 'w', encoding='utf-8') as f:
    json.dump({'env': {k: v for k, v in os.environ.items() if k.startswith('ROOST_')},
               'argv': sys.argv[2:], 'stdin': sys.stdin.read()}, f)
