"""Fuzz the fuzzy-checksum parsers and comparisons: ``parse_ctph``, ``ctph_compare``,
``tlsh_distance``, ``fuzzysum_similar``, and hashing arbitrary bytes with ``ctph``, ``tlsh``
and ``fuzzysum``.

Run: ``python fuzz/fuzz_fuzzy.py -runs=100000``.
"""

from __future__ import annotations

import functools

from _harness import attempt, main, mutate, pick, text_of

SAMPLE = b"The quick brown fox jumps over the lazy dog. " * 40


@functools.cache
def seeds() -> tuple[bytes, ...]:
    """Valid CTPH and TLSH digests, and FuzzySum pairs joined by a comma."""
    from neardup.fuzzy import ctph, fuzzysum, legacy_fuzzysum, tlsh

    out = [ctph(SAMPLE).encode(), ctph(SAMPLE[:300]).encode() + b',"file.txt"']
    out += [tlsh(SAMPLE).encode(), tlsh(SAMPLE[::-1]).encode()]
    out += [",".join(fuzzysum(SAMPLE)).encode(), ",".join(legacy_fuzzysum(SAMPLE)).encode()]
    return tuple(out)


def target(data: bytes) -> None:
    """Parse and compare digests made from the input; hash the input itself."""
    from neardup.fuzzy import (
        ctph,
        ctph_compare,
        fuzzysum,
        fuzzysum_similar,
        legacy_fuzzysum,
        parse_ctph,
        tlsh,
        tlsh_distance,
    )

    seed, rest = pick(seeds(), data)
    a = text_of(mutate(seed, rest))
    b = text_of(seed)
    for x, y in ((a, b), (text_of(data), a)):
        attempt(parse_ctph, x)
        score = attempt(ctph_compare, x, y)
        if isinstance(score, int):
            assert 0 <= score <= 100 and score == ctph_compare(y, x)
        attempt(ctph_compare, x, y, scoring="ppdeep")
        dist = attempt(tlsh_distance, x, y)
        if isinstance(dist, int):
            assert dist >= 0 and dist == tlsh_distance(y, x)
        attempt(tlsh_distance, x, y, len_diff=False)
        px, py = [*x.split(",", 1), ""], [*y.split(",", 1), ""]
        attempt(fuzzysum_similar, (px[0], px[1]), (py[0], py[1]))
    digest = attempt(ctph, data)
    if isinstance(digest, str):
        assert ctph_compare(digest, digest) in (0, 100)
    attempt(tlsh, data)
    attempt(fuzzysum, data)
    attempt(legacy_fuzzysum, text_of(data))


if __name__ == "__main__":
    main(target)
