#!/usr/bin/env python3
"""Write native/src/unicode/tables.bin: the Unicode tables of the text kernels, built by
``neardup._kernels.unicode`` from this Python's unicodedata (run it with Python
3.11: Unicode 14.0), for the compiled core to embed. Run again whenever a table builder
changes; tests/kernels/test_parity_unicode.py fails until the file matches.

Format (little-endian): ``NDUT1\\n``, the Unicode version (u8 length + ASCII), the number of
families (u32); per family its name (u8 length + ASCII) and number of arrays (u32); per array
its name, the dtype code (u8: 1 uint8, 4 int32, 8 int64), the mode (u8: 0 the values, 1 the
differences of successive values, the first against 0), the length (u64) and the number of
runs (u64), then each run as the zigzag varint of its value and the varint of its count.
Run lengths keep the file small (the dense tables are long runs), in a format simple enough
to decode with a dozen lines of Rust.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parents[1] / "src"))

from neardup._kernels import unicode as reference

OUT = Path(__file__).parents[1] / "native" / "src" / "unicode" / "tables.bin"
_CODES = {np.dtype(np.uint8): 1, np.dtype(np.int32): 4, np.dtype(np.int64): 8}


def varint(x: int) -> bytes:
    out = bytearray()
    while True:
        byte = x & 0x7F
        x >>= 7
        if x:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def zigzag(x: int) -> int:
    return (x << 1) ^ (x >> 63) if x < 0 else x << 1


def runs(values: np.ndarray) -> list[tuple[int, int]]:
    if values.size == 0:
        return []
    cuts = np.flatnonzero(values[1:] != values[:-1]) + 1
    starts = np.concatenate(([0], cuts))
    ends = np.concatenate((cuts, [values.size]))
    return [(int(values[a]), int(b - a)) for a, b in zip(starts, ends, strict=True)]


def encode_array(name: str, arr: np.ndarray) -> bytes:
    values = arr.astype(np.int64)
    diffs = np.diff(values, prepend=np.int64(0))
    plain, delta = runs(values), runs(diffs)
    mode, chosen = (0, plain) if len(plain) <= len(delta) else (1, delta)
    body = bytearray()
    body += bytes([len(name)]) + name.encode("ascii")
    body += bytes([_CODES[arr.dtype], mode])
    body += int(arr.size).to_bytes(8, "little") + len(chosen).to_bytes(8, "little")
    for value, count in chosen:
        body += varint(zigzag(value)) + varint(count)
    return bytes(body)


def encode() -> bytes:
    version = reference.unicode_version().encode("ascii")
    out = bytearray(b"NDUT1\n")
    out += bytes([len(version)]) + version
    out += len(reference.FAMILIES).to_bytes(4, "little")
    for family in reference.FAMILIES:
        arrays = reference.tables(family)
        out += bytes([len(family)]) + family.encode("ascii")
        out += len(arrays).to_bytes(4, "little")
        for name in sorted(arrays):
            out += encode_array(name, arrays[name])
    return bytes(out)


if __name__ == "__main__":
    data = encode()
    OUT.write_bytes(data)
    print(f"{OUT}: {len(data)} bytes, Unicode {reference.unicode_version()}")
