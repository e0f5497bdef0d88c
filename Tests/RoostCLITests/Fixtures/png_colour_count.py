#!/usr/bin/python3
"""png_colour_count.py PNG R G B [TOLERANCE]: how many pixels of a screenshot are (nearly) this colour.
Decodes 8-bit RGB/RGBA non-interlaced PNGs (what Chromium writes) with zlib only."""
import struct
import sys
import zlib

path, r, g, b = sys.argv[1], *map(int, sys.argv[2:5])
tolerance = int(sys.argv[5]) if len(sys.argv) > 5 else 8
data = open(path, "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, header = 8, b"", None
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        header = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
width, height, depth, colour, _, _, interlace = header
assert depth == 8 and colour in (2, 6) and interlace == 0, "unsupported PNG %r" % (header,)
channels = 3 if colour == 2 else 4
stride = width * channels
raw = zlib.decompress(idat)
previous = bytearray(stride)
count = 0
for y in range(height):
    kind = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        left = line[i - channels] if i >= channels else 0
        up = previous[i]
        corner = previous[i - channels] if i >= channels else 0
        if kind == 1:
            line[i] = (line[i] + left) & 0xFF
        elif kind == 2:
            line[i] = (line[i] + up) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + (left + up) // 2) & 0xFF
        elif kind == 4:
            p = left + up - corner
            pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
            line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
    for x in range(0, stride, channels):
        if abs(line[x] - r) <= tolerance and abs(line[x + 1] - g) <= tolerance and abs(line[x + 2] - b) <= tolerance:
            count += 1
    previous = line
print(count)
