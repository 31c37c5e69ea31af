"""Fuzz the compatibility facades' parsers: primestamp ``SimHashFingerprint.from_dict`` (on
JSON objects decoded from the input) and the Go package's ``phash_from_hex``.

Run: ``python fuzz/fuzz_compat.py -runs=100000``.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from _harness import attempt, main, mutate, pick, text_of


@functools.cache
def seeds() -> tuple[bytes, ...]:
    """Valid fingerprint dicts (as JSON) and pHash hex strings."""
    from neardup.compat.primestamp import SimHashGenerator, TokenMode

    text = "the quick brown fox jumps over the lazy dog"
    out = [b"DeadBeefCafeBabe", b"0000000000000000"]
    for bits in (64, 128):
        for mode in TokenMode:
            fp = SimHashGenerator(bits, mode, 3).generate(text)
            out.append(json.dumps(fp.to_dict()).encode())
    return tuple(out)


def _loads(blob: bytes) -> Any:
    try:
        return json.loads(blob)
    except (ValueError, RecursionError):  # not JSON: the stdlib's answer, not neardup's
        return None


def target(data: bytes) -> None:
    """Parse raw and mutated seeds as fingerprint dicts and as pHash hex."""
    from neardup.compat.fingerprint import phash_from_hex, phash_hex
    from neardup.compat.primestamp import SimHashFingerprint

    seed, rest = pick(seeds(), data)
    for blob in (data, mutate(seed, rest)):
        obj = _loads(blob)
        if obj is not None:
            fp = attempt(SimHashFingerprint.from_dict, obj)
            if isinstance(fp, SimHashFingerprint):
                assert SimHashFingerprint.from_dict(fp.to_dict()).to_dict() == fp.to_dict()
        value = attempt(phash_from_hex, text_of(blob))
        if isinstance(value, int):
            assert phash_hex(value) == text_of(blob).lower()


if __name__ == "__main__":
    main(target)
