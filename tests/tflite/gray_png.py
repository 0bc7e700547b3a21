"""The 8-bit grayscale PNGs of TFLM's mnist_lstm samples as uint8 arrays (no PIL here)."""
import struct
import zlib

import numpy as np


def _paeth(a, b, c):
    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def read_gray_png(path):
    """uint8[height, width] of an 8-bit grayscale, non-interlaced PNG (else ValueError)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    pos, idat, size = 8, b"", None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if (depth, color, interlace) != (8, 0, 0):
                raise ValueError(f"{path}: not 8-bit grayscale non-interlaced")
            size = (height, width)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    if size is None:
        raise ValueError(f"{path}: no IHDR")
    height, width = size
    raw = zlib.decompress(idat)
    out = np.zeros((height, width), np.uint8)
    prev = [0] * width
    for y in range(height):
        row = raw[y * (width + 1):(y + 1) * (width + 1)]
        kind, line, cur = row[0], row[1:], [0] * width
        for x in range(width):
            a = cur[x - 1] if x else 0
            b = prev[x]
            c = prev[x - 1] if x else 0
            predictor = [0, a, b, (a + b) // 2, _paeth(a, b, c)][kind]
            cur[x] = (line[x] + predictor) & 255
        out[y] = cur
        prev = cur
    return out
