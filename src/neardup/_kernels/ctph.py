"""CTPH (ssdeep) reference: numpy/Python, the twin of ``neardup._native.ctph``.

Two independent implementations give the same digests:

* native (``native/src/ctph``): one pass per document, following libfuzzy 2.14.1's
  multi-block-size state machine.
* ``reference`` (here): Tridgell's original spamsum procedure (ssdeep <= 2.12
  ``fuzzy_hash_buf``): guess the block size from the length, hash with block sizes ``b`` and
  ``2b``, halve ``b`` while the first part is shorter than 32. The rolling hash is computed
  for every position at once with numpy; the FNV piece hashes fold in Python.

Scores (:func:`compare`) follow libfuzzy's ``fuzzy_compare`` (or ppdeep's ``compare``) with
bit-parallel edit distances; :class:`CTPHTable` is the 7-gram index of ``CTPHIndex``.
:func:`neardup._kernels.engine.kernels` picks one (``NEARDUP_BACKEND``).
"""

from __future__ import annotations

import re
from collections import defaultdict

import numpy as np
import numpy.typing as npt

__all__ = ["B64", "CTPHTable", "compare", "digest_packed", "reference_digest", "rolling_sums"]

#: The base64 alphabet of ssdeep digests.
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_HASH_INIT = 0x27  # 0x28021967 mod 64: only the low 6 bits of the FNV state are ever used
_FNV_PRIME_LOW6 = 0x01000193 & 63
_SPAMSUM_LENGTH = 64
_MIN_BLOCKSIZE = 3
I64 = npt.NDArray[np.int64]


def rolling_sums(data: bytes) -> npt.NDArray[np.uint32]:
    """Return ssdeep's rolling hash ``h1 + h2 + h3 (mod 2**32)`` after every byte of ``data``.

    ``h1`` is the sum of the last 7 bytes, ``h2`` their sum weighted 7..1 (newest heaviest),
    ``h3`` the XOR of byte ``k`` steps back shifted left by ``5k`` (32 bits).

    Examples:
        >>> rolling_sums(b"ab").tolist()  # 97 + 679 + 97, then 195 + 1268 + 3138
        [873, 4601]
    """
    x = np.frombuffer(data, dtype=np.uint8).astype(np.uint64)
    n = x.shape[0]
    padded = np.concatenate([np.zeros(6, dtype=np.uint64), x])
    h1 = np.zeros(n, dtype=np.uint64)
    h2 = np.zeros(n, dtype=np.uint64)
    h3 = np.zeros(n, dtype=np.uint64)
    for age in range(7):
        back = padded[6 - age : 6 - age + n]
        h1 += back
        h2 += np.uint64(7 - age) * back
        h3 ^= (back << np.uint64(5 * age)) & np.uint64(0xFFFFFFFF)
    return ((h1 + h2 + h3) & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def _fold(h: int, piece: bytes) -> int:
    for c in piece:
        h = ((h * _FNV_PRIME_LOW6) ^ c) & 63
    return h


def _pieces(data: bytes, triggers: npt.NDArray[np.int64], limit: int, last_nonzero: bool) -> str:
    """One digest part: a character per piece ending at a trigger; the tail joins the last."""
    out: list[str] = []
    overflow = ""  # the character written at index limit-1 once the part is full
    h = _HASH_INIT
    pos = 0
    for t in triggers.tolist():
        h = _fold(h, data[pos : t + 1])
        pos = t + 1
        if len(out) < limit - 1:
            out.append(B64[h])
            h = _HASH_INIT
        else:
            overflow = B64[h]
    h = _fold(h, data[pos:])
    if last_nonzero:
        return "".join(out) + B64[h]
    return "".join(out) + overflow


def reference_digest(data: bytes) -> str:
    """Return the ssdeep digest of ``data`` by the classic spamsum procedure (slow, exact).

    Examples:
        >>> reference_digest(b"")
        '3::'
    """
    n = len(data)
    roll = rolling_sums(data).astype(np.int64)
    last_nonzero = bool(n) and int(roll[-1]) != 0
    block_size = _MIN_BLOCKSIZE
    while block_size * _SPAMSUM_LENGTH < n:
        block_size *= 2
    while True:
        first = np.flatnonzero(roll % block_size == block_size - 1)
        if block_size > _MIN_BLOCKSIZE and len(first) < _SPAMSUM_LENGTH // 2:
            block_size //= 2
            continue
        second = np.flatnonzero(roll % (2 * block_size) == 2 * block_size - 1)
        part1 = _pieces(data, first, _SPAMSUM_LENGTH, last_nonzero)
        part2 = _pieces(data, second, _SPAMSUM_LENGTH // 2, last_nonzero)
        return f"{block_size}:{part1}:{part2}"


def digest_packed(buf: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64]) -> list[str]:
    """Return the digest of every document ``buf[offsets[i]:offsets[i+1]]``.

    Examples:
        >>> buf = np.frombuffer(b"hello", dtype=np.uint8)
        >>> digest_packed(buf, np.array([0, 0, 5], dtype=np.int64))
        ['3::', '3:iKn:p']
    """
    n_docs = offsets.shape[0] - 1
    return [reference_digest(buf[offsets[i] : offsets[i + 1]].tobytes()) for i in range(n_docs)]


# ------------------------------------------------------------------------- scoring

_ROLLING_WINDOW = 7
_MAX_BLOCK_INDEX = 30
_RUN_RE = re.compile(r"(.)\1{3,}", re.DOTALL)
_DIGEST_RE = re.compile(r"([0-9]{1,12}):([A-Za-z0-9+/]*):([A-Za-z0-9+/]*)(?:,.*)?", re.DOTALL)

#: A parsed digest: block size, and both parts with runs of more than 3 characters cut.
Parsed = tuple[int, str, str]


def _parse(digest: str) -> Parsed | None:
    """``blocksize:part1:part2`` parsed as ``neardup.fuzzy.parse_ctph`` does, or ``None``."""
    match = _DIGEST_RE.fullmatch(digest)
    if match is None:
        return None
    block_size = int(match.group(1))
    q, r = divmod(block_size, _MIN_BLOCKSIZE)
    if r or q < 1 or q & (q - 1) or q.bit_length() - 1 > _MAX_BLOCK_INDEX:
        return None
    part1 = _RUN_RE.sub(r"\1\1\1", match.group(2))
    part2 = _RUN_RE.sub(r"\1\1\1", match.group(3))
    if len(part1) > _SPAMSUM_LENGTH or len(part2) > _SPAMSUM_LENGTH:
        return None
    return block_size, part1, part2


def _position_masks(s: str) -> dict[str, int]:
    masks: dict[str, int] = {}
    for i, ch in enumerate(s):
        masks[ch] = masks.get(ch, 0) | (1 << i)
    return masks


def _indel_distance(s1: str, s2: str) -> int:
    """Edit distance with insert/delete 1 and replace 2 (libfuzzy's edit_distn): m+n-2*LCS.

    Examples:
        >>> _indel_distance("kitten", "sitting")
        5
    """
    if not s1 or not s2:
        return len(s1) + len(s2)
    masks = _position_masks(s1)
    full = (1 << len(s1)) - 1
    v = full
    for ch in s2:
        u = v & masks.get(ch, 0)
        v = ((v + u) | (v - u)) & full
    lcs = len(s1) - v.bit_count()
    return len(s1) + len(s2) - 2 * lcs


def _levenshtein(s1: str, s2: str) -> int:
    """Unit-cost Levenshtein distance (Myers / Hyyrö bit-parallel); ppdeep's measure.

    Examples:
        >>> _levenshtein("kitten", "sitting")
        3
    """
    if not s1 or not s2:
        return len(s1) + len(s2)
    masks = _position_masks(s1)
    full = (1 << len(s1)) - 1
    top = 1 << (len(s1) - 1)
    pv, mv, score = full, 0, len(s1)
    for ch in s2:
        eq = masks.get(ch, 0)
        xv = eq | mv
        xh = ((((eq & pv) + pv) & full) ^ pv) | eq
        ph = (mv | ~(xh | pv)) & full
        mh = pv & xh
        if ph & top:
            score += 1
        elif mh & top:
            score -= 1
        ph = ((ph << 1) | 1) & full
        mh = (mh << 1) & full
        pv = (mh | ~(xv | ph)) & full
        mv = ph & xv
    return score


def _grams(s: str) -> set[str]:
    return {s[i : i + _ROLLING_WINDOW] for i in range(len(s) - _ROLLING_WINDOW + 1)}


def _score_strings(s1: str, s2: str, block_size: int, ppdeep: bool) -> int:
    if len(s1) < _ROLLING_WINDOW or len(s2) < _ROLLING_WINDOW:
        return 0
    if _grams(s1).isdisjoint(_grams(s2)):
        return 0
    dist = _levenshtein(s1, s2) if ppdeep else _indel_distance(s1, s2)
    score = (dist * _SPAMSUM_LENGTH) // (len(s1) + len(s2))
    score = (100 * score) // _SPAMSUM_LENGTH
    if score >= 100:
        return 0
    score = 100 - score
    cap = block_size // _MIN_BLOCKSIZE * min(len(s1), len(s2))
    return min(score, cap)


def _compare(da: Parsed, db: Parsed, ppdeep: bool) -> int:
    bs1, bs2 = da[0], db[0]
    if bs1 != bs2 and bs1 != 2 * bs2 and bs2 != 2 * bs1:
        return 0
    if bs1 == bs2 and da[1] == db[1] and (ppdeep or da[2] == db[2]):
        return 100
    if bs1 == bs2:
        return max(
            _score_strings(da[1], db[1], bs1, ppdeep),
            _score_strings(da[2], db[2], 2 * bs1, ppdeep),
        )
    if bs2 == 2 * bs1:
        return _score_strings(db[1], da[2], bs2, ppdeep)
    return _score_strings(da[1], db[2], bs1, ppdeep)


def compare(a: str, b: str, ppdeep: bool) -> int:
    """ssdeep's score of digests ``a`` and ``b``: 0 (no match) .. 100 (identical), as
    libfuzzy's ``fuzzy_compare`` (ppdeep's ``compare`` with ``ppdeep``); -1 when either is not
    a digest (``neardup.fuzzy.parse_ctph`` says why).

    Examples:
        >>> compare("3:AXGBicFlgVNhBGcL6wCrFQEv:AXGHsNhxLsr2C",
        ...         "3:AXGBicFlIHBGcL6wCrFQEv:AXGH6xLsr2C", False)
        22
    """
    da, db = _parse(a), _parse(b)
    if da is None or db is None:
        return -1
    return _compare(da, db, ppdeep)


def _gram_keys(d: Parsed) -> set[tuple[int, str]]:
    """``(block size, 7-gram)`` of part 1, and of part 2 at twice the block size."""
    return {(d[0], g) for g in _grams(d[1])} | {(2 * d[0], g) for g in _grams(d[2])}


class CTPHTable:
    """Many CTPH digests, numbered in insertion order, indexed by ``(block size, 7-gram)``:
    the keys two digests must share to score above 0 (or be identical).

    Args:
        ppdeep: Score as ppdeep does (else as libfuzzy).
    """

    def __init__(self, ppdeep: bool) -> None:
        self._ppdeep = ppdeep
        self._digests: list[Parsed] = []
        self._grams: dict[tuple[int, str], list[int]] = defaultdict(list)
        self._exact: dict[Parsed, list[int]] = defaultdict(list)

    def __len__(self) -> int:
        return len(self._digests)

    def _exact_key(self, d: Parsed) -> Parsed:
        # ppdeep calls digests identical when block size and part 1 agree
        return (d[0], d[1], "" if self._ppdeep else d[2])

    def add(self, digest: str) -> int:
        """Add one digest; returns its id, or -1 (nothing added) when it is not a digest."""
        parsed = _parse(digest)
        if parsed is None:
            return -1
        ident = len(self._digests)
        self._digests.append(parsed)
        for key in _gram_keys(parsed):
            self._grams[key].append(ident)
        self._exact[self._exact_key(parsed)].append(ident)
        return ident

    def add_many(self, digests: list[str]) -> int:
        """Add digests in order until one is not a digest; returns how many were added."""
        for i, digest in enumerate(digests):
            if self.add(digest) < 0:
                return i
        return len(digests)

    def _candidates(self, d: Parsed) -> set[int]:
        found: set[int] = set(self._exact.get(self._exact_key(d), ()))
        for key in _gram_keys(d):
            found.update(self._grams.get(key, ()))
        return found

    def query(self, digest: str, min_score: int) -> list[tuple[int, int]] | None:
        """``[(id, score)]`` of every digest scoring at least ``min_score`` against
        ``digest``, by score (highest first), then id; ``None`` when it is not a digest."""
        parsed = _parse(digest)
        if parsed is None:
            return None
        hits = []
        for ident in self._candidates(parsed):
            score = _compare(parsed, self._digests[ident], self._ppdeep)
            if score >= min_score:
                hits.append((ident, score))
        hits.sort(key=lambda hit: (-hit[1], hit[0]))
        return hits

    def pairs(self, min_score: int) -> tuple[I64, I64, I64]:
        """``(i, j, score)`` int64 arrays, ``i < j``, of every pair scoring at least
        ``min_score``, by ``i``, then ``j``."""
        out: list[tuple[int, int, int]] = []
        for i, parsed in enumerate(self._digests):
            for j in sorted(j for j in self._candidates(parsed) if j > i):
                score = _compare(parsed, self._digests[j], self._ppdeep)
                if score >= min_score:
                    out.append((i, j, score))
        cols = [np.array([t[k] for t in out], dtype=np.int64) for k in range(3)]
        return cols[0], cols[1], cols[2]

    def digests(self) -> list[str]:
        """Every digest as ``blocksize:part1:part2`` (the runs cut), in id order."""
        return [f"{bs}:{p1}:{p2}" for bs, p1, p2 in self._digests]
