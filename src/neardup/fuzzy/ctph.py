"""ssdeep-compatible context-triggered piecewise hashing (CTPH): digests and the 0..100 score.

Kornblum, "Identifying almost identical files using context triggered piecewise hashing",
Digital Investigation 3S (2006); after Tridgell's spamsum. Digests equal libfuzzy's
``fuzzy_hash_buf`` (and ppdeep's ``hash``); :func:`ctph_compare` equals libfuzzy's
``fuzzy_compare`` (ssdeep >= 2.11), or ppdeep's ``compare`` with ``scoring="ppdeep"``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator
from typing import ClassVar, Literal, NamedTuple

import numpy as np

from neardup._kernels import engine
from neardup.config import Params, check_range
from neardup.errors import DecodeError, FormatError, InputError, InputTooLargeError

__all__ = [
    "CTPHDigest",
    "CTPHParams",
    "Data",
    "Scoring",
    "ctph",
    "ctph_compare",
    "ctph_many",
    "parse_ctph",
]

#: What the CTPH functions hash: bytes as they are, str as its UTF-8 encoding.
Data = bytes | bytearray | memoryview | str
#: ``"ssdeep"``: libfuzzy's fuzzy_compare; ``"ppdeep"``: ppdeep.compare's variant.
Scoring = Literal["ssdeep", "ppdeep"]

_SPAMSUM_LENGTH = 64
_ROLLING_WINDOW = 7
_MIN_BLOCKSIZE = 3
_MAX_BLOCK_INDEX = 30
_RUN_RE = re.compile(r"(.)\1{3,}", re.DOTALL)
_DIGEST_RE = re.compile(r"([0-9]{1,12}):([A-Za-z0-9+/]*):([A-Za-z0-9+/]*)(?:,.*)?", re.DOTALL)
_BATCH_BYTES = 64 * 1024 * 1024


@dataclasses.dataclass(frozen=True, slots=True)
class CTPHParams(Params):
    """Parameters of :func:`ctph`.

    Attributes:
        max_bytes: Cap on the size of one input (InputTooLargeError above it). At most
            2**34; ssdeep's own ``fuzzy_hash_buf`` stops at 2**32 - 1.
    """

    KIND: ClassVar[str] = "ctph"
    max_bytes: int = 1 << 30

    def __post_init__(self) -> None:
        check_range("max_bytes", self.max_bytes, 0, 1 << 34, integer=True)


def _to_bytes(data: Data, max_bytes: int) -> bytes:
    if isinstance(data, str):
        if len(data) > max_bytes:
            raise InputTooLargeError(
                f"input of {len(data)} characters exceeds the CTPH cap of {max_bytes} bytes; "
                "raise CTPHParams.max_bytes or split the input"
            )
        try:
            raw = data.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise DecodeError(
                f"str input cannot be encoded as UTF-8 ({exc}); pass bytes instead"
            ) from exc
    elif isinstance(data, bytes | bytearray | memoryview):
        raw = bytes(data)
    else:
        raise InputError(f"CTPH hashes bytes or str, got {type(data).__name__}")
    if len(raw) > max_bytes:
        raise InputTooLargeError(
            f"input of {len(raw)} bytes exceeds the CTPH cap of {max_bytes} bytes; "
            "raise CTPHParams.max_bytes or split the input"
        )
    return raw


def _digest_batch(raws: list[bytes]) -> list[str]:
    lengths = np.fromiter((len(r) for r in raws), dtype=np.int64, count=len(raws))
    offsets = np.zeros(len(raws) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    buf = np.frombuffer(b"".join(raws), dtype=np.uint8)
    result: list[str] = engine.kernels("ctph").digest_packed(buf, offsets)
    return result


def ctph(data: Data, *, params: CTPHParams | None = None) -> str:
    """Return the ssdeep digest ``blocksize:part1:part2`` of ``data``.

    Any bytes are accepted (binary files too); a str is hashed as its UTF-8 encoding. Empty
    input gives ``"3::"``, as ssdeep does. Inputs shorter than about 4 KB get few pieces and
    compare poorly (ssdeep caps their scores); prefer TLSH or MinHash for short texts.

    Args:
        data: The bytes (or text) to hash.
        params: The size cap.

    Returns:
        The digest, identical to ``ssdeep.hash`` / ``ppdeep.hash``.

    Raises:
        InputTooLargeError: ``data`` is larger than ``params.max_bytes``.
        DecodeError: A str with lone surrogates (not encodable as UTF-8).
        InputError: ``data`` is neither bytes-like nor str.

    Examples:
        >>> ctph(b"Also called fuzzy hashes, Ctph can match inputs that have homologies.")
        '3:AXGBicFlgVNhBGcL6wCrFQEv:AXGHsNhxLsr2C'
        >>> ctph(b"")
        '3::'
    """
    params = params or CTPHParams()
    return _digest_batch([_to_bytes(data, params.max_bytes)])[0]


def ctph_many(datas: Iterable[Data], *, params: CTPHParams | None = None) -> list[str]:
    """Return the digest of every input, hashed in batches over one packed buffer.

    The inputs are packed (up to 64 MiB at a time) into one uint8 buffer with offsets and
    hashed by one kernel call per batch, which avoids per-call overhead on many small inputs.

    Args:
        datas: The inputs (bytes or str each).
        params: The size cap (per input).

    Returns:
        One digest per input, in order (held in memory).

    Raises:
        InputTooLargeError: An input is larger than ``params.max_bytes``.
        DecodeError: A str with lone surrogates.
        InputError: An input is neither bytes-like nor str.

    Examples:
        >>> ctph_many([b"", "hello"])
        ['3::', '3:iKn:p']
    """
    params = params or CTPHParams()
    out: list[str] = []
    batch: list[bytes] = []
    size = 0
    for data in datas:
        raw = _to_bytes(data, params.max_bytes)
        batch.append(raw)
        size += len(raw)
        if size >= _BATCH_BYTES:
            out.extend(_digest_batch(batch))
            batch, size = [], 0
    if batch:
        out.extend(_digest_batch(batch))
    return out


class CTPHDigest(NamedTuple):
    """A parsed digest: block size and both parts with runs of > 3 equal characters cut."""

    block_size: int
    part1: str
    part2: str


def _eliminate_sequences(part: str) -> str:
    """Drop every character equal to the three before it (ssdeep keeps runs of at most 3)."""
    if len(part) <= 3:
        return part
    # one C-speed pass (a Python loop took seconds on a crafted megabyte-long part)
    return _RUN_RE.sub(r"\1\1\1", part)


def parse_ctph(digest: str) -> CTPHDigest:
    """Parse ``blocksize:part1:part2`` (an ssdeep ``,"filename"`` suffix is ignored).

    Args:
        digest: A digest from :func:`ctph` or the ssdeep tools.

    Returns:
        The block size and the two parts after sequence elimination.

    Raises:
        FormatError: Not a digest: wrong shape, a character outside ssdeep's base64 alphabet,
            a block size that is not ``3 * 2**k`` (k <= 30), or a part longer than 64.

    Examples:
        >>> parse_ctph("3:AAAAAAbc:AXY")
        CTPHDigest(block_size=3, part1='AAAbc', part2='AXY')
    """
    if not isinstance(digest, str):
        raise FormatError(f"a CTPH digest is a str, got {type(digest).__name__}")
    match = _DIGEST_RE.fullmatch(digest)
    if match is None:
        raise FormatError(
            f"{digest[:120]!r} is not a CTPH digest; expected 'blocksize:part1:part2' with "
            "parts in the base64 alphabet, as ctph() returns"
        )
    block_size = int(match.group(1))
    q, r = divmod(block_size, _MIN_BLOCKSIZE)
    if r or q < 1 or q & (q - 1) or q.bit_length() - 1 > _MAX_BLOCK_INDEX:
        raise FormatError(f"block size {block_size} of {digest[:120]!r} is not 3 * 2**k")
    part1 = _eliminate_sequences(match.group(2))
    part2 = _eliminate_sequences(match.group(3))
    if len(part1) > _SPAMSUM_LENGTH or len(part2) > _SPAMSUM_LENGTH:
        raise FormatError(f"a part of {digest[:120]!r} is longer than {_SPAMSUM_LENGTH}")
    return CTPHDigest(block_size, part1, part2)


def _grams(s: str) -> set[str]:
    return {s[i : i + _ROLLING_WINDOW] for i in range(len(s) - _ROLLING_WINDOW + 1)}


def _digest_text(digest: object) -> str:
    """A digest as the kernels take it: a str as it is, a :class:`CTPHDigest` formatted."""
    if isinstance(digest, str):
        return digest
    if isinstance(digest, CTPHDigest):
        return f"{digest.block_size}:{digest.part1}:{digest.part2}"
    parse_ctph(digest)  # type: ignore[arg-type]  # raises FormatError: not a str
    raise AssertionError("unreachable")  # pragma: no cover


def ctph_compare(a: str | CTPHDigest, b: str | CTPHDigest, *, scoring: Scoring = "ssdeep") -> int:
    """Return ssdeep's match score of two CTPH digests: 0 (no match) .. 100 (identical).

    Digests whose block sizes differ by more than a factor of 2 score 0; so do digests whose
    comparable parts share no 7-character substring. Otherwise the score comes from an edit
    distance scaled by the parts' lengths, capped for small block sizes. Symmetric.

    Args:
        a: A digest (str, or parsed by :func:`parse_ctph`).
        b: Another digest.
        scoring: ``"ssdeep"`` (default) follows libfuzzy's ``fuzzy_compare`` (ssdeep 2.11+:
            insert/delete cost 1, replace 2; 100 only when both parts are identical).
            ``"ppdeep"`` reproduces ``ppdeep.compare`` (unit-cost Levenshtein; 100 as soon
            as the first parts are identical), which differs from libfuzzy on some pairs.

    Returns:
        The score, 0..100.

    Raises:
        FormatError: A digest is malformed (see :func:`parse_ctph`).
        InputError: ``scoring`` is not ``"ssdeep"`` or ``"ppdeep"``.

    Examples:
        >>> ctph_compare("3:AXGBicFlgVNhBGcL6wCrFQEv:AXGHsNhxLsr2C",
        ...              "3:AXGBicFlIHBGcL6wCrFQEv:AXGH6xLsr2C")
        22
    """
    if scoring not in ("ssdeep", "ppdeep"):
        raise InputError(f"scoring must be 'ssdeep' or 'ppdeep', got {scoring!r}")
    ta, tb = _digest_text(a), _digest_text(b)
    score: int = engine.kernels("ctph").compare(ta, tb, scoring == "ppdeep")
    if score < 0:  # not a digest: parse_ctph raises the error that says why
        parse_ctph(ta)
        parse_ctph(tb)
        raise FormatError(f"{ta[:120]!r} or {tb[:120]!r} is not a CTPH digest")  # pragma: no cover
    return score


def iter_grams(digest: CTPHDigest) -> Iterator[tuple[int, str]]:
    """Yield ``(block size, 7-gram)`` for both parts: the keys two digests must share to score.

    Part 1 is keyed at the digest's block size, part 2 at twice that, so comparable parts of
    two digests (equal or doubled block sizes) meet under the same key.

    Examples:
        >>> sorted(iter_grams(parse_ctph("3:ABCDEFGH:abcdefg")))
        [(3, 'ABCDEFG'), (3, 'BCDEFGH'), (6, 'abcdefg')]
    """
    for gram in _grams(digest.part1):
        yield digest.block_size, gram
    for gram in _grams(digest.part2):
        yield 2 * digest.block_size, gram
