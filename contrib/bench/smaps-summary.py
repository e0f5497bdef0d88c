#!/usr/bin/env python3
"""smaps-summary.py SMAPS [N]: resident memory of a process by mapping, largest first (for contrib/bench/ingest).

SMAPS is a copy of /proc/PID/smaps (contrib/bench/ingest --keep leaves smaps-idle-I and smaps-after-I). Prints
the total and anonymous resident MB, then the N (default 25) largest mappings summed by file name ([anon] for
anonymous ones: malloc arenas, thread stacks), each with its anonymous (dirty private) share.
"""
import collections
import re
import sys

rss = collections.Counter()
anon = collections.Counter()
name = None
for line in open(sys.argv[1]):
    if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
        fields = line.split()
        name = fields[5].rsplit("/", 1)[-1] if len(fields) > 5 else "[anon]"
    elif line.startswith("Rss:"):
        rss[name] += int(line.split()[1])
    elif line.startswith("Anonymous:"):
        anon[name] += int(line.split()[1])
print(f"total {sum(rss.values()) / 1024:.1f} MB, anonymous {sum(anon.values()) / 1024:.1f} MB")
for mapping, kb in rss.most_common(int(sys.argv[2]) if len(sys.argv) > 2 else 25):
    print(f"{kb / 1024:7.2f} MB  (anonymous {anon[mapping] / 1024:5.2f})  {mapping}")
