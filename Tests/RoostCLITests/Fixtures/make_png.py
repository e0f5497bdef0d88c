#!/usr/bin/python3
"""make_png.py OUT WIDTH HEIGHT R G B: a PNG of one solid colour, with a one-pixel-wide noise column so that
two pictures of the same colour and size still differ (written with zlib only, no imaging library). The rows are
compressed as they are made, so a picture of 81 megapixels costs a row of memory, not 243 MB."""
import os
import struct
import sys
import zlib

out, width, height, r, g, b = sys.argv[1], *map(int, sys.argv[2:7])
noise = os.urandom(height)
row = b"\x00" + bytes((r, g, b)) * (width - 1)
compressor = zlib.compressobj(6)
data = b"".join(compressor.compress(row + bytes((noise[y], noise[y], noise[y]))) for y in range(height)) + compressor.flush()


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


with open(out, "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", data) + chunk(b"IEND", b""))
