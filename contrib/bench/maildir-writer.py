#!/usr/bin/env python3
"""maildir-writer.py DIR COUNT SIZE — the kernel's price of a Maildir file, for contrib/bench/ingest --mirror.

Delivers COUNT mails of SIZE bytes into the Maildir DIR the way Roost's mirror does (an unnamed file made in tmp/
with O_TMPFILE, written, linked into new/ by its /proc/self/fd name; one syncfs(2) every 250 mails, about a pass of
the mirror in a flood) and prints one JSON line: the system CPU it spent per mail in µs (the kernel's work: making,
writing, naming and syncing the file) and its user CPU (the interpreter's, not comparable). The mirror's thread pays
that system time too; what it spends above it is Roost's (reading rows, rendering mails, bookkeeping).
"""
import ctypes
import json
import os
import resource
import sys

AT_FDCWD = -100
AT_SYMLINK_FOLLOW = 0x400


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: maildir-writer.py DIR COUNT SIZE")
    folder, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    libc = ctypes.CDLL(None, use_errno=True)
    for sub in ("tmp", "new", "cur"):
        os.makedirs(os.path.join(folder, sub), exist_ok=True)
    tmp = os.open(os.path.join(folder, "tmp"), os.O_RDONLY | os.O_DIRECTORY)
    new = os.path.join(folder, "new").encode()
    mail = b"From: reference@bench.invalid\nSubject: reference\n\n" + b"x" * max(0, size - 50)
    before = resource.getrusage(resource.RUSAGE_SELF)
    for number in range(count):
        descriptor = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o600, dir_fd=tmp)
        os.write(descriptor, mail)
        name = b"%s/%d.M%dP%d.reference" % (new, number, number, os.getpid())
        if libc.linkat(AT_FDCWD, b"/proc/self/fd/%d" % descriptor, AT_FDCWD, name, AT_SYMLINK_FOLLOW) != 0:
            sys.exit(f"maildir-writer: cannot link {name.decode()}: {os.strerror(ctypes.get_errno())}")
        os.close(descriptor)
        if number % 250 == 249 or number == count - 1:
            if libc.syncfs(tmp) != 0:
                sys.exit(f"maildir-writer: cannot sync: {os.strerror(ctypes.get_errno())}")
    after = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"mails": count, "bytes": len(mail),
                      "system_us": round((after.ru_stime - before.ru_stime) / count * 1e6, 1),
                      "user_us": round((after.ru_utime - before.ru_utime) / count * 1e6, 1)}))


if __name__ == "__main__":
    main()
