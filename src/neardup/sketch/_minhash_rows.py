"""MinHash slot rows of token spans, per preset: the batch driver over the minhash kernels.

:class:`neardup.sketch.minhash.MinHasher` tokenizes its canonical documents and hands the
spans down here once; the feature hashes, the slot rows and the empty check are done here,
in :mod:`neardup._kernels.minhash` (native or numpy, the same bits). ``docs/minhash.md`` gives
the definitions of each preset.
"""

from __future__ import annotations

from functools import cache
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from neardup._kernels import engine
from neardup._spans import Spans, shingle_spans
from neardup.errors import EmptyInputError

__all__ = ["check_empty", "datasketch_permutations", "empty_value", "feature_rows", "slot_rows"]

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
#: Slot rows: ``uint64``, or ``uint32`` from the fused pass with sets (32-bit slots).
_Rows = TypeVar("_Rows", bound=npt.NDArray[np.unsignedinteger[Any]])

_MAX64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_MAX32 = np.uint64(0xFFFFFFFF)
_MERSENNE61 = (1 << 61) - 1


def empty_value(scheme: str) -> np.uint64:
    """The slot value of an empty feature set under ``scheme``."""
    return _MAX64 if scheme in ("txtfp", "oph") else _MAX32


def check_empty(rows: _Rows, *, preset: str, empty: str) -> _Rows:
    """``rows`` (``uint64``, or ``uint32`` for a 32-bit preset), unless ``empty="error"`` and
    a row has no features.

    Raises:
        EmptyInputError: a row is empty, with ``empty="error"``.
    """
    if empty == "error" and len(rows):
        bad = np.flatnonzero(np.all(rows == empty_value(preset), axis=1))
        if len(bad):
            shown = ", ".join(str(i) for i in bad[:5].tolist())
            raise EmptyInputError(
                f"document(s) {shown} have no features (empty, or no tokens after "
                f"canonicalization); the {preset} preset cannot sketch them: "
                "drop them first, or use empty='sketch'"
            )
    return rows


def slot_rows(
    spans: Spans, *, preset: str, num_perm: int, seed: int, k: int | None, short: str = "joined"
) -> U64:
    """The ``(n, num_perm)`` slot rows of the documents of ``spans``, no empty check.

    Args:
        spans: With ``k=None``, the features themselves (a tokenizer's own spans; for
            ``xxh3`` and ``oph`` each is a 1-shingle); else the inner tokens, shingled ``k``
            at a time.
        preset: ``xxh3``, ``txtfp``, ``datasketch``, ``datasketch-legacy`` or ``oph``.
        num_perm: Slots per row.
        seed: The token-hash seed (xxh3 presets) or the permutation seed (datasketch).
        k: Tokens per shingle, or ``None`` (see ``spans``).
        short: What a text with fewer than ``k`` tokens gives: ``"joined"`` or ``"separate"``.
    """
    kern = engine.kernels("minhash")
    if preset in ("xxh3", "oph"):
        lo, hi, offsets = _shingle_hashes(spans, 1 if k is None else k, short == "joined", seed)
        if preset == "oph":
            rows: U64 = kern.oph(lo, offsets, num_perm, np.uint64(seed))
            return rows
        rows = kern.minhash_double32(lo, hi, offsets, num_perm)
        return rows
    feats = spans if k is None else shingle_spans(spans, k, short=short)
    if preset == "txtfp":
        lo, hi = engine.hash_spans(feats, "xxh3_128", seed)
        rows = kern.minhash_double(lo, hi, feats.doc_offsets, num_perm)
        return rows
    return _datasketch(feats, preset == "datasketch-legacy", num_perm, seed)


def feature_rows(
    spans: Spans, *, num_perm: int, seed: int, k: int | None, short: str = "joined"
) -> tuple[U64, U64, I64]:
    """:func:`slot_rows` of the ``xxh3`` preset, plus the 64-bit hash of every feature and
    the per-document feature offsets: ``(rows, features, offsets)``."""
    lo, hi, offsets = _shingle_hashes(spans, 1 if k is None else k, short == "joined", seed)
    rows: U64 = engine.kernels("minhash").minhash_double32(lo, hi, offsets, num_perm)
    return rows, lo, offsets


def _shingle_hashes(inner: Spans, k: int, joined: bool, seed: int) -> tuple[U64, U64, I64]:
    """(lo, hi, doc_offsets) of the k-shingle feature hashes of inner-token spans."""
    toks, _ = engine.hash_spans(inner, "xxh3_64", seed)
    lo, hi, offsets = engine.kernels("minhash").combine_shingles(
        toks, inner.doc_offsets, k, joined, np.uint64(seed)
    )
    return lo, hi, offsets


def _datasketch(spans: Spans, legacy: bool, num_perm: int, seed: int) -> U64:
    """datasketch 2.0.0's ``hashvalues`` of each document's features (SHA-1, 32 bits)."""
    import hashlib  # here: loading OpenSSL costs a run that never hashes this way ~4 MB

    raw = spans.buf.tobytes()
    hv = np.fromiter(
        (
            int.from_bytes(hashlib.sha1(raw[s:e]).digest()[:4], "little")
            for s, e in zip(spans.starts.tolist(), spans.ends.tolist(), strict=True)
        ),
        dtype=np.uint64,
        count=len(spans.starts),
    )
    a, b = _datasketch_permutations(num_perm, seed, legacy)
    kern = engine.kernels("minhash")
    fn = kern.minhash_legacy if legacy else kern.minhash_affine32
    out: U64 = fn(hv, spans.doc_offsets, a, b)
    return out


def datasketch_permutations(
    num_perm: int, seed: int, scheme: str
) -> npt.NDArray[np.unsignedinteger]:
    """The ``(2, num_perm)`` permutation parameters ``(a, b)`` datasketch 2.0.0 draws for
    ``scheme``: ``legacy`` (uint64, below the Mersenne prime 2**61 - 1), ``affine32`` (uint32)
    or ``affine64`` (uint64); ``a`` is odd in the affine schemes."""
    gen = np.random.RandomState(seed)
    if scheme == "legacy":
        return np.array(
            [
                (
                    gen.randint(1, _MERSENNE61, dtype=np.uint64),
                    gen.randint(0, _MERSENNE61, dtype=np.uint64),
                )
                for _ in range(num_perm)
            ],
            dtype=np.uint64,
        ).T.copy()
    width = 32 if scheme == "affine32" else 64
    dt = np.uint32 if width == 32 else np.uint64
    a = gen.randint(0, 1 << (width - 1), num_perm, dtype=dt) * dt(2) + dt(1)
    b = gen.randint(0, 1 << width, num_perm, dtype=dt)
    return np.array([a, b])


@cache
def _datasketch_permutations(num_perm: int, seed: int, legacy: bool) -> tuple[U64, U64]:
    """:func:`datasketch_permutations` of the ``legacy`` or ``affine32`` scheme, as uint64."""
    ab = datasketch_permutations(num_perm, seed, "legacy" if legacy else "affine32")
    return ab[0].astype(np.uint64), ab[1].astype(np.uint64)
