"""Reference of the datasketch family (Python, ``hashlib`` and numpy): the twin of the
native ``neardup._native.datasketch``, with the same names, bits and errors.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from neardup.errors import InputError

__all__ = ["sha1_tokens", "sketch_sets", "update"]

U64 = npt.NDArray[np.uint64]
Slots = npt.NDArray[np.unsignedinteger]

MSG_BYTES = (
    "tokens must be bytes for the SHA-1 hash; encode str tokens (e.g. t.encode('utf-8')) "
    "or pass your own hash function"
)
MSG_MIXED = (
    "tokens must be all bytes or all str (UTF-8 encoded); encode them (e.g. "
    "t.encode('utf-8')) or pass your own hash function"
)
_SCHEMES = ("affine32", "affine64", "legacy")
_MASK32 = np.uint64(0xFFFFFFFF)
_PRIME61 = np.uint64((1 << 61) - 1)


class _Tokens:
    """Each token's bytes, with the kinds seen in the whole call (bytes and str do not mix)."""

    def __init__(self, text: bool) -> None:
        self.text = text
        self.saw_str = False
        self.saw_bytes = False

    def _mixed(self) -> None:
        if self.saw_str and self.saw_bytes:
            raise InputError(MSG_MIXED)

    def raw(self, token: object) -> bytes:
        if isinstance(token, bytes):
            self.saw_bytes = True
            self._mixed()
            return bytes(token)
        if isinstance(token, str):
            if not self.text:
                raise InputError(MSG_BYTES)
            self.saw_str = True
            self._mixed()
            return token.encode("utf-8", "surrogatepass")
        try:
            data = memoryview(token).tobytes()  # type: ignore[arg-type]
        except TypeError:
            raise InputError(MSG_MIXED if self.text else MSG_BYTES) from None
        self.saw_bytes = True
        self._mixed()
        return data


def _hashes(kinds: _Tokens, tokens: Iterable[object], wide: bool) -> U64:
    width = 8 if wide else 4
    values = [int.from_bytes(hashlib.sha1(kinds.raw(t)).digest()[:width], "little") for t in tokens]
    return np.array(values, dtype=np.uint64)


def _scheme(scheme: str) -> str:
    if scheme not in _SCHEMES:
        raise ValueError(f"unknown scheme '{scheme}'; use affine32, affine64 or legacy")
    return scheme


def _params(scheme: str, a: object, b: object) -> tuple[Slots, Slots]:
    want = np.uint32 if scheme == "affine32" else np.uint64
    ok = all(isinstance(x, np.ndarray) and x.ndim == 1 and x.dtype == want for x in (a, b))
    if not ok or len(a) != len(b) or not len(a):  # type: ignore[arg-type]
        raise TypeError(
            f"permutation parameters of scheme {scheme} must be 1-D "
            f"{np.dtype(want).name} arrays of one length"
        )
    return a, b  # type: ignore[return-value]


def _fmix32(h: U64) -> npt.NDArray[np.uint32]:
    x = h.astype(np.uint32)
    x ^= x >> np.uint32(16)
    x *= np.uint32(0x85EBCA6B)
    x ^= x >> np.uint32(13)
    x *= np.uint32(0xC2B2AE35)
    result: npt.NDArray[np.uint32] = x ^ (x >> np.uint32(16))
    return result


def _fmix64(h: U64) -> U64:
    x = h.copy()
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xFF51AFD7ED558CCD)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xC4CEB9FE1A85EC53)
    result: U64 = x ^ (x >> np.uint64(33))
    return result


def _permute(scheme: str, h: U64, a: Slots, b: Slots, row: Slots) -> Slots:
    """``row`` lowered by the permuted hashes ``h`` (a new array)."""
    if not len(h):
        return row.copy()
    with np.errstate(over="ignore"):
        if scheme == "affine32":
            values = _fmix32(h)[:, None] * a + b
        elif scheme == "affine64":
            values = _fmix64(h)[:, None] * a + b
        else:
            values = ((h[:, None] * a + b) % _PRIME61) & _MASK32
    lowered: Slots = np.minimum(row, values.min(axis=0).astype(row.dtype))
    return lowered


def sketch_sets(
    sets: Iterable[Iterable[object]], a: Slots, b: Slots, scheme: str, text: bool
) -> Slots:
    """The slots of every token set: ``(len(sets), num_perm)``, uint32 for ``affine32`` and
    uint64 otherwise, row ``i`` equal to datasketch's ``hashvalues`` after ``update_batch``
    of set ``i`` with its default SHA-1 hash and the permutations ``(a, b)``. ``text``: str
    tokens count as their UTF-8 bytes (else only bytes-like tokens are taken).

    Raises:
        InputError: A token that is not bytes-like (nor str, with ``text``), or bytes and str
            in one call.
    """
    a, b = _params(_scheme(scheme), a, b)
    kinds = _Tokens(text)
    empty = np.uint64((1 << 64) - 1 if scheme == "affine64" else 0xFFFFFFFF)
    rows = []
    for s in list(sets):
        row = np.full(len(a), empty, dtype=a.dtype)
        rows.append(_permute(scheme, _hashes(kinds, s, scheme == "affine64"), a, b, row))
    if not rows:
        return np.empty((0, len(a)), dtype=a.dtype)
    return np.stack(rows)


def update(
    hashvalues: Slots, tokens: Iterable[object], a: Slots, b: Slots, scheme: str, text: bool
) -> Slots:
    """``numpy.minimum(hashvalues, row)`` where ``row`` is the sketch of ``tokens`` (as
    :func:`sketch_sets` makes it): a new array, datasketch's ``update_batch``.

    Raises:
        TypeError: ``hashvalues`` is not a 1-D array of the scheme's dtype and ``num_perm``
            slots.
        InputError: As :func:`sketch_sets`.
    """
    a, b = _params(_scheme(scheme), a, b)
    h = _hashes(_Tokens(text), tokens, scheme == "affine64")
    if (
        not isinstance(hashvalues, np.ndarray)
        or hashvalues.ndim != 1
        or hashvalues.dtype != a.dtype
        or len(hashvalues) != len(a)
    ):
        raise TypeError(
            f"hashvalues of scheme {scheme} must be a 1-D {a.dtype.name} array of {len(a)} slots"
        )
    return _permute(scheme, h, a, b, hashvalues)


def sha1_tokens(tokens: Iterable[object], wide: bool, text: bool) -> U64:
    """datasketch's ``sha1_hash64`` (``wide``) or ``sha1_hash32`` of every token, as uint64.

    Raises:
        InputError: As :func:`sketch_sets`.
    """
    return _hashes(_Tokens(text), tokens, wide)
