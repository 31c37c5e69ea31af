"""TLSH digests through py-tlsh, and TLSH distances over packed digests in numpy.

Oliver, Cheng and Chen, "TLSH -- A Locality Sensitive Hash", 4th Cybercrime and Trustworthy
Computing Workshop (2013). Digests come from the maintained ``py-tlsh`` package (extra
``fuzzy``); the distance is re-implemented here (``totalDiff`` of the reference C++, with the
length term), vectorised over many digests and bit-identical to ``tlsh.diff``.

A digest is ``"T1"`` + 70 hex digits: checksum (1 byte), length code ``L`` (1 byte), the two
quartile ratios ``Q1``/``Q2`` (1 byte; these three header bytes are printed with their nibbles
swapped) and the 128 two-bit bucket codes (32 bytes, printed last byte first).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from typing import ClassVar, Literal

import numpy as np
import numpy.typing as npt

from neardup._extras import require_extra
from neardup.config import Params, check_choice, check_range
from neardup.errors import DecodeError, FormatError, InputError, InputTooLargeError

__all__ = [
    "MIN_TLSH_BYTES",
    "PACKED_WIDTH",
    "TLSHError",
    "TLSHParams",
    "pack_tlsh",
    "tlsh",
    "tlsh_distance",
    "tlsh_distance_matrix",
    "tlsh_distances",
    "tlsh_many",
]

#: py-tlsh returns no digest (``"TNULL"``) for inputs shorter than this many bytes.
MIN_TLSH_BYTES = 50
#: Bytes per packed digest: checksum, L, Q, then the 32 body bytes.
PACKED_WIDTH = 35

_HEX_RE = re.compile(r"(?:[Tt]1)?([0-9A-Fa-f]{70})")


class TLSHError(InputError):
    """py-tlsh cannot digest this input: under 50 bytes, or too little variation ("TNULL")."""


@dataclasses.dataclass(frozen=True, slots=True)
class TLSHParams(Params):
    """Parameters of :func:`tlsh` / :func:`tlsh_many`.

    Attributes:
        max_bytes: Cap on the size of one input (InputTooLargeError above it).
        invalid: What :func:`tlsh_many` does with an input py-tlsh cannot digest: ``"raise"``
            a :class:`TLSHError`, or ``"none"`` to put None in its place. :func:`tlsh` always
            raises.
    """

    KIND: ClassVar[str] = "tlsh"
    max_bytes: int = 1 << 30
    invalid: Literal["raise", "none"] = "raise"

    def __post_init__(self) -> None:
        check_range("max_bytes", self.max_bytes, 1, 1 << 34, integer=True)
        check_choice("invalid", self.invalid, ("raise", "none"))


def _to_bytes(data: bytes | bytearray | memoryview | str, max_bytes: int) -> bytes:
    if isinstance(data, str):
        try:
            data = data.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise DecodeError(
                f"str input cannot be encoded as UTF-8 ({exc}); pass bytes instead"
            ) from exc
    elif isinstance(data, bytearray | memoryview):
        data = bytes(data)
    elif not isinstance(data, bytes):
        raise InputError(f"TLSH hashes bytes or str, got {type(data).__name__}")
    if len(data) > max_bytes:
        raise InputTooLargeError(
            f"input of {len(data)} bytes exceeds the TLSH cap of {max_bytes} bytes; "
            "raise TLSHParams.max_bytes or split the input"
        )
    return data


def _hash_one(module: object, raw: bytes) -> str | None:
    digest: str = module.hash(raw)  # type: ignore[attr-defined]
    return None if digest == "TNULL" or not digest else digest


def _invalid_error(raw: bytes) -> TLSHError:
    if len(raw) < MIN_TLSH_BYTES:
        return TLSHError(
            f"TLSH needs at least {MIN_TLSH_BYTES} bytes, got {len(raw)}; use ctph() or an "
            "exact hash for very short inputs"
        )
    return TLSHError(
        f"TLSH cannot digest these {len(raw)} bytes: too little variation (py-tlsh returned "
        "TNULL; for example a run of one repeated byte); use an exact hash for them"
    )


def tlsh(data: bytes | bytearray | memoryview | str, *, params: TLSHParams | None = None) -> str:
    """Return the TLSH digest of ``data`` (``"T1"`` + 70 uppercase hex digits), as py-tlsh does.

    Args:
        data: The bytes to hash; a str is hashed as its UTF-8 encoding.
        params: The size cap.

    Returns:
        The digest, equal to ``tlsh.hash(data)``.

    Raises:
        TLSHError: Fewer than 50 bytes, or too little variation (py-tlsh's ``"TNULL"``).
        InputTooLargeError: ``data`` is larger than ``params.max_bytes``.
        DecodeError: A str with lone surrogates.
        InputError: ``data`` is neither bytes-like nor str.
        MissingExtraError: py-tlsh is not installed (extra ``fuzzy``).

    Examples:
        >>> text = b"".join(b"line %d of a small test document\\n" % i for i in range(20))
        >>> digest = tlsh(text)
        >>> digest[:2], len(digest)
        ('T1', 72)
    """
    params = params or TLSHParams()
    module = require_extra("fuzzy", "tlsh")
    raw = _to_bytes(data, params.max_bytes)
    digest = _hash_one(module, raw)
    if digest is None:
        raise _invalid_error(raw)
    return digest


def tlsh_many(
    datas: Iterable[bytes | bytearray | memoryview | str], *, params: TLSHParams | None = None
) -> list[str | None]:
    """Return the TLSH digest of every input (None for undigestible ones if asked).

    Args:
        datas: The inputs.
        params: The size cap, and ``invalid="none"`` to get None instead of an error.

    Returns:
        One digest (or None) per input, in order.

    Raises:
        TLSHError: An input cannot be digested and ``params.invalid == "raise"``.
        InputTooLargeError: An input is larger than ``params.max_bytes``.
        MissingExtraError: py-tlsh is not installed (extra ``fuzzy``).

    Examples:
        >>> tlsh_many([b"short"], params=TLSHParams(invalid="none"))
        [None]
    """
    params = params or TLSHParams()
    module = require_extra("fuzzy", "tlsh")
    out: list[str | None] = []
    for data in datas:
        raw = _to_bytes(data, params.max_bytes)
        digest = _hash_one(module, raw)
        if digest is None and params.invalid == "raise":
            raise _invalid_error(raw)
        out.append(digest)
    return out


def _swap_nibbles(x: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    return ((x << 4) | (x >> 4)).astype(np.uint8)


def pack_tlsh(digests: Iterable[str]) -> npt.NDArray[np.uint8]:
    """Decode TLSH hex digests into an ``(n, 35)`` uint8 array for vectorised distances.

    Columns: checksum, L, Q (nibbles un-swapped, as the C++ stores them), then the 32 body
    bytes. ``"T1"``-prefixed and bare 70-digit digests are accepted, in either case.

    Args:
        digests: TLSH hex digests.

    Returns:
        The packed array.

    Raises:
        FormatError: A digest is not ``T1`` + 70 hex digits (``"TNULL"`` included).

    Examples:
        >>> pack_tlsh(["T1" + "12" * 35]).shape
        (1, 35)
    """
    rows: list[bytes] = []
    for digest in digests:
        match = _HEX_RE.fullmatch(digest) if isinstance(digest, str) else None
        if match is None:
            raise FormatError(
                f"{str(digest)[:80]!r} is not a TLSH digest; expected 'T1' + 70 hex digits "
                "as tlsh() returns (TNULL marks an input TLSH could not digest)"
            )
        rows.append(bytes.fromhex(match.group(1)))
    if not rows:
        return np.zeros((0, PACKED_WIDTH), dtype=np.uint8)
    raw = np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(len(rows), PACKED_WIDTH)
    packed = raw.copy()
    packed[:, :3] = _swap_nibbles(raw[:, :3])
    return packed


def _body_table() -> npt.NDArray[np.uint8]:
    """Distance between two body bytes: per 2-bit code |x - y|, except that 0 vs 3 costs 6."""
    a = np.arange(256, dtype=np.int64)[:, None]
    b = np.arange(256, dtype=np.int64)[None, :]
    total = np.zeros((256, 256), dtype=np.int64)
    for shift in (0, 2, 4, 6):
        d = np.abs(((a >> shift) & 3) - ((b >> shift) & 3))
        total += np.where(d == 3, 6, d)
    return total.astype(np.uint8)


_BODY_TABLE = _body_table()


def _mod_diff(x: npt.NDArray[np.int64], y: npt.NDArray[np.int64], r: int) -> npt.NDArray[np.int64]:
    d: npt.NDArray[np.int64] = np.abs(x - y)
    return np.minimum(d, r - d)


def _header_matrix(
    qs: npt.NDArray[np.uint8], many: npt.NDArray[np.uint8], len_diff: bool
) -> npt.NDArray[np.int64]:
    """``(len(qs), len(many))`` header part of ``totalDiff``: length, Q ratios, checksum."""
    a = qs[:, None, :3].astype(np.int64)
    b = many[None, :, :3].astype(np.int64)
    total = np.zeros((qs.shape[0], many.shape[0]), dtype=np.int64)
    if len_diff:
        ld = _mod_diff(a[..., 1], b[..., 1], 256)
        total += np.where(ld <= 1, ld, ld * 12)
    for shift in (0, 4):
        qd = _mod_diff((a[..., 2] >> shift) & 15, (b[..., 2] >> shift) & 15, 16)
        total += np.where(qd <= 1, qd, (qd - 1) * 12)
    total += a[..., 0] != b[..., 0]
    return total


def _body_matrix(
    qs: npt.NDArray[np.uint8], many: npt.NDArray[np.uint8], lo: int = 3, hi: int = PACKED_WIDTH
) -> npt.NDArray[np.int64]:
    """``(len(qs), len(many))`` body distances over bytes ``lo:hi``, by flat table lookups."""
    index = qs[:, None, lo:hi].astype(np.intp) * 256 + many[None, :, lo:hi]
    body: npt.NDArray[np.int64] = _BODY_FLAT.take(index).sum(axis=2, dtype=np.int64)
    return body


_BODY_FLAT = _BODY_TABLE.ravel()


def tlsh_distances(
    query: npt.NDArray[np.uint8],
    packed: npt.NDArray[np.uint8],
    *,
    len_diff: bool = True,
    cutoff: int | None = None,
) -> npt.NDArray[np.int64]:
    """Return the TLSH distance from one packed digest to each row of ``packed``.

    With ``cutoff``, rows are pruned as soon as their partial distance (header first, then
    the body in four slices) exceeds it; pruned rows get ``cutoff + 1``, so every value
    ``<= cutoff`` is exact.

    Args:
        query: One packed digest (35 uint8, from :func:`pack_tlsh`).
        packed: ``(n, 35)`` packed digests.
        len_diff: Include the length term, as ``tlsh.diff`` does (``tlsh.diffxlen`` omits it).
        cutoff: Stop computing a row once its distance exceeds this.

    Returns:
        ``(n,)`` int64 distances.

    Examples:
        >>> p = pack_tlsh(["T1" + "12" * 35, "T1" + "12" * 34 + "13"])
        >>> tlsh_distances(p[0], p).tolist()
        [0, 1]
    """
    qs = query[None, :]
    dist = _header_matrix(qs, packed, len_diff)[0]
    if cutoff is None:
        full: npt.NDArray[np.int64] = dist + _body_matrix(qs, packed)[0]
        return full
    alive = np.flatnonzero(dist <= cutoff)
    for lo in range(3, PACKED_WIDTH, 8):
        if alive.size == 0:
            break
        dist[alive] += _body_matrix(qs, packed[alive], lo, min(lo + 8, PACKED_WIDTH))[0]
        alive = alive[dist[alive] <= cutoff]
    out = np.full(packed.shape[0], cutoff + 1, dtype=np.int64)
    out[alive] = dist[alive]
    return out


def tlsh_distance_matrix(
    qs: npt.NDArray[np.uint8], packed: npt.NDArray[np.uint8], *, len_diff: bool = True
) -> npt.NDArray[np.int64]:
    """Return the ``(len(qs), len(packed))`` TLSH distances between two packed sets.

    Memory is about ``len(qs) * len(packed) * 35 * 8`` bytes: call it on blocks of rows.

    Examples:
        >>> p = pack_tlsh(["T1" + "12" * 35, "T1" + "12" * 34 + "13"])
        >>> tlsh_distance_matrix(p, p).tolist()
        [[0, 1], [1, 0]]
    """
    return _header_matrix(qs, packed, len_diff) + _body_matrix(qs, packed)


def tlsh_distance(a: str, b: str, *, len_diff: bool = True) -> int:
    """Return the TLSH distance of two digests: 0 for identical, larger for less similar.

    Equal to ``tlsh.diff(a, b)`` (``tlsh.diffxlen`` with ``len_diff=False``), computed
    without py-tlsh. Unbounded above; TLSH's authors call < 50 very similar and < 100 similar.

    Args:
        a: A TLSH digest.
        b: Another TLSH digest.
        len_diff: Include the input-length term.

    Returns:
        The distance (symmetric).

    Raises:
        FormatError: A digest is malformed or ``"TNULL"``.

    Examples:
        >>> tlsh_distance("T1" + "12" * 35, "T1" + "12" * 34 + "13")
        1
    """
    packed = pack_tlsh([a, b])
    return int(tlsh_distances(packed[0], packed[1:], len_diff=len_diff)[0])
