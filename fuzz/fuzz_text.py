"""Fuzz the text path on arbitrary ``str``: every canonicalizer preset (with small caps),
the tokenizers, and SimHash / MinHash sketching of the result.

Run: ``python fuzz/fuzz_text.py -runs=100000``.
"""

from __future__ import annotations

import functools

from _harness import attempt, main, text_of


@functools.cache
def tools() -> tuple[object, ...]:
    """Canonicalizers with small caps, tokenizers and hashers, built once."""
    from neardup import (
        CanonicalConfig,
        Canonicalizer,
        GraphemeTokenizer,
        MinHasher,
        NgramTokenizer,
        ShingleTokenizer,
        SimHasher,
        WordTokenizer,
    )

    canon = [Canonicalizer(p) for p in ("txtfp", "none")]
    canon.append(Canonicalizer(config=CanonicalConfig(max_bytes=2048, max_growth=2.0)))
    canon.append(
        Canonicalizer(
            config=CanonicalConfig(collapse_whitespace=True, strip_diacritics=True, max_bytes=4096)
        )
    )
    try:
        canon.append(Canonicalizer("secure"))
        canon[-1].canonicalize("x")  # type: ignore[attr-defined]
    except ImportError:  # the security extra is absent
        canon.pop()
    tokenizers = [WordTokenizer(), GraphemeTokenizer(), NgramTokenizer(3)]
    tokenizers.append(ShingleTokenizer(3, WordTokenizer()))
    hashers = [SimHasher(), SimHasher(bits=128), MinHasher(num_perm=16), SimHasher(preset="go")]
    return tuple(canon), tuple(tokenizers), tuple(hashers)


def target(data: bytes) -> None:
    """Canonicalize, tokenize and sketch the input as text."""
    canon, tokenizers, hashers = tools()
    text = text_of(data)
    for c in canon:
        out = attempt(c.canonicalize, text)  # type: ignore[attr-defined]
        assert out is None or isinstance(out, str)
    for t in tokenizers:
        attempt(lambda tok=t: list(tok.tokenize(text)))  # type: ignore[attr-defined]
    for h in hashers:
        attempt(h.sketch, text)  # type: ignore[attr-defined]


if __name__ == "__main__":
    main(target)
