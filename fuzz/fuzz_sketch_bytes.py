"""Fuzz the value types' parsers: from_bytes / from_hex of SimHash, MinHash, ImageHash and
HammingIndex.from_bytes. A parse that succeeds must round-trip.

Run: ``python fuzz/fuzz_sketch_bytes.py -runs=100000``.
"""

from __future__ import annotations

import functools

from _harness import attempt, main, mutate, pick, text_of


@functools.cache
def seeds() -> tuple[bytes, ...]:
    """Valid serializations of every value type, bytes and hex."""
    from neardup import HammingIndex, MinHasher, SimHash, SimHasher
    from neardup.image.value import ImageHash, ImageHashParams

    text = "the quick brown fox jumps over the lazy dog"
    sims = [SimHasher(bits=b).sketch(text) for b in (64, 128, 256)]
    mh = MinHasher(num_perm=16).sketch(text)
    mt = MinHasher(preset="txtfp").sketch(text)
    ih = ImageHash(0x1234_5678_9ABC_DEF0, ImageHashParams())
    index = HammingIndex(64, 3)
    index.add_many(["a", "b"], [sims[0].value, 5])
    out: list[bytes] = []
    for s in sims:
        out += [s.to_bytes(), s.to_bytes(header=True), s.to_hex().encode()]
    out += [SimHash(7).to_bytes(header=True)]
    out += [mh.to_bytes(), mt.to_bytes(), mh.to_hex().encode()[:200]]
    out += [ih.to_bytes(), ih.to_hex().encode(), index.to_bytes()]
    return tuple(out)


def target(data: bytes) -> None:
    """Feed raw and mutated-seed bytes (and their text) to every from_bytes / from_hex."""
    from neardup import HammingIndex, MinHash, SimHash
    from neardup.image.value import ImageHash

    seed, rest = pick(seeds(), data)
    for blob in (data, mutate(seed, rest)):
        sh = attempt(SimHash.from_bytes, blob)
        if isinstance(sh, SimHash):
            assert SimHash.from_bytes(sh.to_bytes(header=True)) == sh
            assert SimHash.from_hex(sh.to_hex(), params=sh.params) == sh
        mh = attempt(MinHash.from_bytes, blob)
        if isinstance(mh, MinHash):
            assert MinHash.from_bytes(mh.to_bytes()) == mh
        ih = attempt(ImageHash.from_bytes, blob)
        if isinstance(ih, ImageHash):
            assert ImageHash.from_bytes(ih.to_bytes()) == ih
        hi = attempt(HammingIndex.from_bytes, blob)
        if isinstance(hi, HammingIndex):
            assert HammingIndex.from_bytes(hi.to_bytes()).to_bytes() == hi.to_bytes()
        text = text_of(blob)
        sh = attempt(SimHash.from_hex, text)
        if isinstance(sh, SimHash):
            assert sh.to_hex() == text.lower()
        mh = attempt(MinHash.from_hex, text)
        if isinstance(mh, MinHash):
            assert MinHash.from_hex(mh.to_hex()) == mh
        ih = attempt(ImageHash.from_hex, text)
        if isinstance(ih, ImageHash):
            assert ih.to_hex() == text.lower()


if __name__ == "__main__":
    main(target)
