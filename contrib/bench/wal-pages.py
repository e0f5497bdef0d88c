#!/usr/bin/env python3
"""wal-pages — which B-trees the newest commit in an archive's write-ahead log wrote (docs/performance-history.md,
"Bytes written at 10M").

    contrib/bench/wal-pages.py ARCHIVE.sqlite

During a bulk import the log is left at its size between batches and each batch writes it from the start, so the
frames of the current generation (the salts of the log's header) up to the last commit frame are one batch's pages.
Each page is named by `dbstat` (read-only, at the same moment; pages not in any B-tree are free or past the end).
"""
import collections
import shutil
import sqlite3
import struct
import sys
import tempfile


def main():
    archive = sys.argv[1]
    with tempfile.NamedTemporaryFile() as copy:
        shutil.copyfile(archive + "-wal", copy.name)
        data = open(copy.name, "rb").read()
    _, _, page_size, _, salt1, salt2 = struct.unpack(">IIIIII", data[:24])
    pages, committed, offset = [], 0, 32
    while offset + 24 + page_size <= len(data):
        page, commit, s1, s2 = struct.unpack(">IIII", data[offset:offset + 16])
        if (s1, s2) != (salt1, salt2):
            break
        pages.append(page)
        if commit:
            committed = len(pages)
        offset += 24 + page_size
    pages = set(pages[:committed])
    print(f"{len(pages)} pages, {len(pages) * page_size / 2**20:.1f} MB")
    owner = dict((page, name) for name, page in
                 sqlite3.connect(f"file:{archive}?mode=ro", uri=True).execute("SELECT name, pageno FROM dbstat"))
    for name, count in collections.Counter(owner.get(page, "(free or past the end)") for page in pages).most_common(20):
        print(f"{name:40s} {count:8d} pages {count * page_size / 2**20:8.1f} MB")


if __name__ == "__main__":
    main()
