"""MinHash of token sets with datasketch's permutation schemes, in batch: the bulk path.

datasketch 2.0.0 hashes each token with SHA-1 (first 4 bytes, little-endian) and applies
``num_perm`` permutations drawn from ``numpy.random.RandomState(seed)``: ``affine32``
(``a * fmix32(h) + b mod 2**32``, the default), ``affine64`` (the same over 64 bits with
``sha1_hash64``) or ``legacy`` (``(a * h + b) mod (2**61 - 1)``, low 32 bits). This module
runs those definitions over many token sets, giving datasketch's ``hashvalues`` bit for bit:
with SHA-1, one call of :mod:`neardup._kernels.datasketch` reads the token lists as they are;
with XXH3, one kernel call per step. :mod:`neardup.compat.datasketch` is built on it; see
``docs/minhash.md``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from functools import lru_cache
from types import ModuleType
from typing import Literal

import numpy as np
import numpy.typing as npt

from neardup._kernels import engine
from neardup._spans import Spans
from neardup.config import check_choice
from neardup.errors import ConfigError, InputError
from neardup.sketch._minhash_rows import datasketch_permutations

__all__ = [
    "SCHEMES",
    "Scheme",
    "cardinality",
    "hash_tokens",
    "max_hash",
    "pack_token_sets",
    "permutations",
    "permute",
    "sketch_token_sets",
]

Scheme = Literal["affine32", "affine64", "legacy"]
#: datasketch 2.0.0's permutation schemes.
SCHEMES: tuple[str, ...] = ("affine32", "affine64", "legacy")

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
_MAX32 = np.uint64(0xFFFFFFFF)


def max_hash(scheme: str) -> int:
    """The largest slot value (and the empty sketch's value) of a scheme."""
    return (1 << 64) - 1 if scheme == "affine64" else (1 << 32) - 1


def _dtype(scheme: str) -> type[np.unsignedinteger[npt.NBitBase]]:
    return np.uint32 if scheme == "affine32" else np.uint64  # type: ignore[return-value]


@lru_cache(maxsize=256)
def permutations(num_perm: int, seed: int, scheme: str) -> npt.NDArray[np.unsignedinteger]:
    """datasketch's ``(2, num_perm)`` permutation parameters ``(a, b)`` (read-only).

    uint32 for ``affine32``, uint64 otherwise, drawn exactly as datasketch 2.0.0 draws them.
    """
    check_choice("scheme", scheme, SCHEMES)
    out = datasketch_permutations(num_perm, seed, scheme)
    out.setflags(write=False)
    return out


def hash_tokens(tokens: Sequence[bytes], *, bits: int = 32, hash: str = "sha1") -> U64:
    """Hash each byte token in one kernel call.

    ``hash="sha1"``: datasketch's ``sha1_hash32`` (``bits=32``) or ``sha1_hash64``
    (``bits=64``), the list read as it is. ``hash="xxh3"``: XXH3-64 with seed 0, cut to the
    low ``bits`` bits (what ``hashfunc=lambda b: xxhash.xxh3_64_intdigest(b) & 0xFFFFFFFF``
    gives datasketch).

    Raises:
        InputError: A token is not bytes-like (``hash="sha1"``).

    Examples:
        >>> hash_tokens([b"hello"]).tolist()
        [499578026]
    """
    if hash == "sha1":
        hashes: U64 = engine.kernels("datasketch").sha1_tokens(tokens, bits == 64, False)
        return hashes
    lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    return _hash_packed(b"".join(tokens), lengths, "affine64" if bits == 64 else "", hash)


def pack_token_sets(
    sets: Sequence[Sequence[bytes | str]], *, text: bool = True
) -> tuple[bytes, I64, I64]:
    """``(raw, lengths, doc_offsets)``: every token back to back, each token's length in
    bytes, and where each set's tokens start; C-level passes, no Python call per token.
    ``str`` tokens are UTF-8 encoded (one join, one encode; per token only when a token is
    not ASCII); ``text=False`` takes bytes only, as datasketch's SHA-1 hash does.

    Raises:
        InputError: A token that is neither bytes nor str, bytes and str mixed, or a str
            with ``text=False``.
    """
    counts = np.fromiter(map(len, sets), dtype=np.int64, count=len(sets))
    offsets = np.zeros(len(sets) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    try:
        # one join per set, then one of those: about half the time of one join over a
        # chain of every token (no list of every token is built)
        raw = b"".join(map(b"".join, sets))  # type: ignore[arg-type]
    except TypeError:
        if not text:
            raise InputError(
                "tokens must be bytes for the SHA-1 hash; encode str tokens (e.g. "
                "t.encode('utf-8')) or pass your own hash function"
            ) from None
        return _pack_str(sets, offsets)
    lengths = np.fromiter(
        map(len, itertools.chain.from_iterable(sets)), dtype=np.int64, count=int(offsets[-1])
    )
    return raw, lengths, offsets


def _pack_str(sets: Sequence[Sequence[bytes | str]], offsets: I64) -> tuple[bytes, I64, I64]:
    """:func:`pack_token_sets` of ``str`` tokens: one join and one UTF-8 encode per set;
    only a set that is not ASCII measures its tokens' bytes one by one."""
    try:
        texts = ["".join(toks) for toks in sets]  # type: ignore[arg-type]
    except TypeError:
        raise InputError(
            "tokens must be all bytes or all str (UTF-8 encoded); encode them "
            "(e.g. t.encode('utf-8')) or pass your own hash function"
        ) from None
    encoded = [t.encode("utf-8", "surrogatepass") for t in texts]
    lengths = np.fromiter(
        map(len, itertools.chain.from_iterable(sets)), dtype=np.int64, count=int(offsets[-1])
    )
    for i, (text, raw) in enumerate(zip(texts, encoded, strict=True)):
        if len(raw) != len(text):  # not ASCII: a character may be several bytes
            toks = (t.encode("utf-8", "surrogatepass") for t in sets[i])  # type: ignore[union-attr]
            lengths[offsets[i] : offsets[i + 1]] = np.fromiter(
                map(len, toks), dtype=np.int64, count=len(sets[i])
            )
    return b"".join(encoded), lengths, offsets


def _hash_packed(raw: bytes, lengths: I64, scheme: str, hash: str) -> U64:
    """Hashes of tokens packed back to back in ``raw`` (64-bit for ``affine64``)."""
    check_choice("hash", hash, ("sha1", "xxh3"))
    ends = np.cumsum(lengths)
    starts = ends - lengths
    buf = np.frombuffer(raw, dtype=np.uint8)
    wide = scheme == "affine64"
    if hash == "xxh3":
        spans = Spans(buf, starts, ends, np.array([0, len(lengths)], dtype=np.int64))
        lo, _ = engine.hash_spans(spans, "xxh3_64", 0)
        return lo if wide else lo & _MAX32
    kern = engine.kernels("sha1")
    out: U64 = (kern.sha1_64 if wide else kern.sha1_32)(buf, starts, ends)
    return out


def _minhash_kernels() -> ModuleType:
    """The selected backend's MinHash kernels."""
    return engine.kernels("minhash")


def _fmix64(h: U64) -> U64:
    h = h ^ (h >> np.uint64(33))
    h = h * np.uint64(0xFF51AFD7ED558CCD)
    h = h ^ (h >> np.uint64(33))
    h = h * np.uint64(0xC4CEB9FE1A85EC53)
    return h ^ (h >> np.uint64(33))


def permute(
    hashes: U64, doc_offsets: I64, *, num_perm: int = 128, seed: int = 1, scheme: str = "affine32"
) -> npt.NDArray[np.unsignedinteger]:
    """Slot values of many documents from their token hashes: ``(n, num_perm)``.

    uint32 for ``affine32``, uint64 for ``affine64`` and ``legacy`` (datasketch's dtypes).
    A document without tokens gets every slot at :func:`max_hash`.

    Raises:
        InputError: A hash wider than 32 bits for ``affine32`` or ``legacy``.
    """
    check_choice("scheme", scheme, SCHEMES)
    h = np.ascontiguousarray(hashes, dtype=np.uint64)
    offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    if scheme != "affine64" and len(h) and int(h.max()) > int(_MAX32):
        raise InputError(
            f"a hash value does not fit 32 bits for scheme {scheme!r}; use a 32-bit hash "
            "function or scheme='affine64'"
        )
    ab = permutations(num_perm, seed, scheme)
    if scheme == "affine64":
        n = len(offsets) - 1
        out64 = np.full((n, num_perm), np.uint64(max_hash(scheme)), dtype=np.uint64)
        mixed = _fmix64(h)
        for d in range(n):
            lo, hi = int(offsets[d]), int(offsets[d + 1])
            if hi > lo:
                for start in range(lo, hi, 4096):
                    part = mixed[start : min(hi, start + 4096), None] * ab[0] + ab[1]
                    np.minimum(out64[d], part.min(axis=0), out=out64[d])
        return out64
    if scheme == "legacy":
        a, b = ab[0].astype(np.uint64), ab[1].astype(np.uint64)
        legacy: U64 = _minhash_kernels().minhash_legacy(h, offsets, a, b)
        return legacy
    rows: npt.NDArray[np.uint32] = engine.kernels("affine").affine32(
        h.astype(np.uint32), offsets, ab[0], ab[1]
    )
    return rows


def sketch_token_sets(
    token_sets: Iterable[Iterable[bytes | str]],
    *,
    num_perm: int = 128,
    seed: int = 1,
    scheme: str = "affine32",
    hash: str = "sha1",
) -> npt.NDArray[np.unsignedinteger]:
    """MinHash slots of many token sets: ``(n, num_perm)``, datasketch's hashvalues.

    Row ``i`` equals ``datasketch.MinHash(num_perm, seed, scheme=scheme)`` after
    ``update_batch(token_sets[i])`` (``str`` tokens count as their UTF-8 bytes, which
    datasketch users encode themselves). One hash kernel call and one permutation kernel call
    for the whole batch. ``hash="xxh3"`` replaces SHA-1 (most of the time) by XXH3, as a
    datasketch user passing an xxh3 ``hashfunc`` would (see :func:`hash_tokens`).

    Raises:
        InputError: A token that is neither bytes nor str, or both kinds in one call.
        ConfigError: An unknown scheme, or num_perm < 1.

    Examples:
        >>> rows = sketch_token_sets([[b"a", b"b"], []], num_perm=4)
        >>> rows.shape, rows.dtype.name, int(rows[1, 0]) == max_hash("affine32")
        ((2, 4), 'uint32', True)
    """
    if num_perm < 1:
        raise ConfigError(f"num_perm must be at least 1, got {num_perm}")
    sets: list[Sequence[bytes | str]] = []
    for t in token_sets:
        if isinstance(t, bytes | str):
            raise InputError("each token set must be an iterable of tokens, not one str/bytes")
        sets.append(t if isinstance(t, list | tuple) else list(t))
    return _sketch_sets(sets, num_perm, seed, scheme, hash, text=True)


def _sketch_sets(
    sets: Sequence[Sequence[bytes | str]],
    num_perm: int,
    seed: int,
    scheme: str,
    hash: str,
    *,
    text: bool,
) -> npt.NDArray[np.unsignedinteger]:
    """:func:`sketch_token_sets` of a list of token lists (``text=False``: bytes only)."""
    if hash == "sha1" and num_perm >= 1:
        check_choice("scheme", scheme, SCHEMES)
        ab = permutations(num_perm, seed, scheme)
        rows: npt.NDArray[np.unsignedinteger] = engine.kernels("datasketch").sketch_sets(
            sets, ab[0], ab[1], scheme, text
        )
        return rows
    raw, lengths, offsets = pack_token_sets(sets, text=text)
    hashes = _hash_packed(raw, lengths, scheme, hash)
    return permute(hashes, offsets, num_perm=num_perm, seed=seed, scheme=scheme)


def cardinality(hashvalues: npt.ArrayLike, *, scheme: str = "affine32") -> float:
    """datasketch's ``MinHash.count()``: ``k / sum(v / max) - 1``, the estimated number of
    distinct tokens behind a sketch (Cohen 1997; inf for the empty sketch).

    Examples:
        >>> rows = sketch_token_sets([[str(i).encode() for i in range(500)]], num_perm=256)
        >>> 400 < cardinality(rows[0]) < 600
        True
    """
    v = np.asarray(hashvalues)
    with np.errstate(divide="ignore"):
        return float(len(v) / np.sum(v / float(max_hash(scheme))) - 1.0)
