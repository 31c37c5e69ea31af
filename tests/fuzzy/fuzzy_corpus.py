"""The fuzzy tests' corpus: generated files of the kinds found on a disk (prose, source code,
logs, structured binaries, compressed-looking noise) plus edited copies (built once per
process, the same bytes on every machine: nothing is read from the host)."""

from __future__ import annotations

import random
import struct
from functools import cache

_N_FILES = 170  # the TLSH parity test wants more than 150 digestible files
_MAX_FILE = 200_000  # ppdeep is pure Python (~5 MB/s): keep the corpus quick to check


def _vocabulary(rng: random.Random) -> list[str]:
    syllables = [c + v for c in "bcdfghklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ou", "ei")]
    words = {"".join(rng.choices(syllables, k=rng.choice((1, 1, 2, 2, 3, 4)))) for _ in range(3000)}
    return sorted(words)


def _prose(rng: random.Random, size: int, words: list[str], weights: list[float]) -> bytes:
    """Wrapped paragraphs of Zipf-distributed words."""
    out: list[str] = []
    n = 0
    while n < size:
        sentence = " ".join(rng.choices(words, cum_weights=weights, k=rng.randint(4, 18)))
        line = sentence[:1].upper() + sentence[1:] + rng.choice((". ", ", ", "; ", ".\n\n"))
        out.append(line)
        n += len(line)
    text = "".join(out)
    lines, col = [], 0
    for word in text.split(" "):  # wrap at ~72 columns, as text files are
        if col + len(word) > 72:
            lines.append("\n")
            col = 0
        lines.append(word + " ")
        col += len(word) + 1
    return "".join(lines).encode()[:size]


def _code(rng: random.Random, size: int, words: list[str]) -> bytes:
    """Indented source-like lines: keywords, identifiers, operators, literals."""
    keywords = ["def", "return", "if", "else:", "for", "in", "import", "class", "while", "yield"]
    out: list[str] = []
    n, depth = 0, 0
    while n < size:
        ident = "_".join(rng.sample(words[:400], rng.randint(1, 3)))
        kind = rng.random()
        if kind < 0.2:
            line = f"def {ident}({rng.choice(words)}, {rng.choice(words)}={rng.randint(0, 99)}):"
            depth = 1
        elif kind < 0.35:
            line = f"{rng.choice(keywords)} {ident} {rng.choice('+-*/%<>=')} {rng.randint(0, 999)}"
        elif kind < 0.5:
            line = f"# {' '.join(rng.choices(words, k=rng.randint(3, 9)))}"
        else:
            line = f"{ident} = {rng.choice(words)}.{rng.choice(words)}({rng.randint(0, 9)})"
        text = "    " * depth + line + "\n"
        depth = min(3, max(0, depth + rng.choice((-1, 0, 0, 1))))
        out.append(text)
        n += len(text)
    return "".join(out).encode()[:size]


def _log(rng: random.Random, size: int, words: list[str]) -> bytes:
    out: list[bytes] = []
    n, t = 0, 1_700_000_000
    while n < size:
        t += rng.randint(0, 90)
        level = rng.choice(("INFO", "INFO", "INFO", "WARN", "DEBUG", "ERROR"))
        msg = " ".join(rng.choices(words[:200], k=rng.randint(2, 8)))
        line = f"{t} {level} [{rng.choice(words[:20])}] {msg} id={rng.randint(0, 10**6)}\n"
        out.append(line.encode())
        n += len(line)
    return b"".join(out)[:size]


def _binary(rng: random.Random, size: int, words: list[str]) -> bytes:
    """An executable-like layout: header, tables of ascending integers, zero padding, string
    tables and stretches of machine-code-like bytes drawn from a skewed alphabet."""
    parts = [b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack("<HHIQ", 3, 62, 1, 0x1040)]
    opcodes = bytes(rng.randrange(256) for _ in range(40))
    n = len(parts[0])
    while n < size:
        kind = rng.random()
        if kind < 0.3:
            base = rng.randrange(1 << 20)
            part = b"".join(struct.pack("<Q", base + 16 * k) for k in range(rng.randint(8, 400)))
        elif kind < 0.45:
            part = bytes(rng.choice((16, 64, 256, 1024)))
        elif kind < 0.65:
            part = b"\0".join(w.encode() for w in rng.choices(words, k=rng.randint(10, 200)))
        else:
            part = bytes(rng.choices(opcodes, k=rng.randint(100, 6000)))
        parts.append(part)
        n += len(part)
    return b"".join(parts)[:size]


@cache
def machine_files() -> list[tuple[str, bytes]]:
    """A few hundred (name, content) pairs like the files on a disk (text and binary)."""
    rng = random.Random(20240605)
    words = _vocabulary(rng)
    weights, total = [], 0.0
    for rank in range(len(words)):
        total += 1.0 / (rank + 1)
        weights.append(total)
    makers = [
        ("prose", lambda r, s: _prose(r, s, words, weights)),
        ("code", lambda r, s: _code(r, s, words)),
        ("log", lambda r, s: _log(r, s, words)),
        ("binary", lambda r, s: _binary(r, s, words)),
        ("noise", lambda r, s: r.randbytes(s)),
    ]
    out: list[tuple[str, bytes]] = []
    for i in range(_N_FILES):
        kind, make = makers[i % len(makers)] if i % 9 else makers[0]
        # sizes log-uniform from 64 bytes to _MAX_FILE; a quarter of them small (< 4 KiB)
        high = 4096 if i % 4 == 0 else _MAX_FILE
        size = int(64 * (high / 64) ** rng.random())
        if kind == "noise":
            size = min(size, 20_000)
        out.append((f"{kind}-{i:03d}", make(rng, size)))
    synthetic = [
        ("empty", b""),
        ("one byte", b"a"),
        ("six bytes", b"abcdef"),
        ("seven zero bytes", b"\0" * 7),
        ("text then zeros", b"some text before a run of zeros " * 40 + b"\0" * 64),
        ("all zeros 5000", b"\0" * 5000),
        ("all 0xff 20000", b"\xff" * 20000),
        ("random 100k", random.Random(1).randbytes(100_000)),
        ("random 3000", random.Random(2).randbytes(3000)),
        ("periodic", b"0123456789abcdef" * 8000),
    ]
    out.extend(synthetic)
    return out


def _edits(data: bytes, rng: random.Random) -> list[bytes]:
    """Edited copies: an insertion, a deletion, a few flipped bytes, an append, a truncation."""
    if len(data) < 16:
        return [data + b"x"]
    mid = rng.randrange(len(data))
    flipped = bytearray(data)
    for _ in range(3):
        k = rng.randrange(len(flipped))
        flipped[k] ^= 0x5A
    return [
        data[:mid] + b"inserted text right here " * 3 + data[mid:],
        data[: mid // 2] + data[mid:],
        bytes(flipped),
        data + data[: len(data) // 8],
        data[: len(data) * 3 // 4],
    ]


@cache
def edited_files() -> list[tuple[str, bytes, bytes]]:
    """(name, original, edited copy) for every corpus file with edits."""
    rng = random.Random(99)
    out: list[tuple[str, bytes, bytes]] = []
    for name, data in machine_files():
        edits = _edits(data, rng)
        if len(data) > 60_000:  # ppdeep is slow: fewer edits of the big files
            edits = edits[::2]
        for k, edited in enumerate(edits):
            out.append((f"{name}#edit{k}", data, edited))
    return out
