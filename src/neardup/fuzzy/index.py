"""Search over many fuzzy digests: a 7-gram index for CTPH, packed vectorised scans for TLSH.

Both indexes hold everything in memory (the algorithm needs all digests at hand), number
digests 0, 1, ... in insertion order, and offer ``query`` for one digest and ``pairs`` for all
pairs, the form a dedup pipeline consumes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import cast

import numpy as np
import numpy.typing as npt

from neardup._kernels import engine
from neardup.errors import ConfigError, FormatError
from neardup.fuzzy.ctph import CTPHDigest, Scoring, _digest_text, parse_ctph
from neardup.fuzzy.tlsh import PACKED_WIDTH, pack_tlsh, tlsh_distance_matrix, tlsh_distances
from neardup.index import _serial

__all__ = ["CTPHIndex", "TLSHIndex"]

_BLOCK_CELLS = 1 << 17  # distance-matrix cells per block: ~32 MB of int64 lookups


def _check_min_score(min_score: int) -> None:
    if isinstance(min_score, bool) or not isinstance(min_score, int) or not 1 <= min_score <= 100:
        raise ConfigError(f"min_score must be an integer from 1 to 100, got {min_score!r}")


class CTPHIndex:
    """Find CTPH digests that score above a threshold without comparing every pair.

    ssdeep scores two digests above 0 only when their block sizes are equal or differ by a
    factor of 2 and the parts compared share a 7-character substring (or the digests are
    identical). The index keeps, for every ``(block size, 7-gram)`` of every digest (part 1
    at its block size, part 2 at twice it), the digests that contain it; candidates are the
    digests sharing a key (or identical), and only those are scored exactly with
    :func:`~neardup.fuzzy.ctph.ctph_compare`. The result equals an exhaustive comparison.

    Args:
        scoring: ``"ssdeep"`` or ``"ppdeep"``, passed to ``ctph_compare``.

    Examples:
        >>> index = CTPHIndex()
        >>> index.add_many(["3:AXGBicFlgVNhBGcL6wCrFQEv:AXGHsNhxLsr2C",
        ...                 "3:AXGBicFlIHBGcL6wCrFQEv:AXGH6xLsr2C", "3:abc:def"])
        [0, 1, 2]
        >>> list(index.pairs(min_score=10))
        [(0, 1, 22)]
    """

    def __init__(self, *, scoring: Scoring = "ssdeep") -> None:
        if scoring not in ("ssdeep", "ppdeep"):
            raise ConfigError(f"scoring must be 'ssdeep' or 'ppdeep', got {scoring!r}")
        self._scoring: Scoring = scoring
        # the digests and their 7-gram tables: the compiled CTPHTable, or its Python twin
        self._table = engine.kernels("ctph").CTPHTable(scoring == "ppdeep")

    def __len__(self) -> int:
        return len(self._table)

    def __getstate__(self) -> dict[str, object]:
        return {"scoring": self._scoring, "digests": self._table.digests()}

    def __setstate__(self, state: dict[str, object]) -> None:
        digests = state.get("digests")
        if digests is None:  # a pickle of the Python-only index: its parsed digests
            parsed = cast("list[CTPHDigest]", state["_digests"])
            digests = [f"{d.block_size}:{d.part1}:{d.part2}" for d in parsed]
        self._scoring = cast(Scoring, state.get("scoring", state.get("_scoring")))
        self._table = engine.kernels("ctph").CTPHTable(self._scoring == "ppdeep")
        self.add_many(cast("list[str]", digests))

    def to_bytes(self) -> bytes:
        """Serialize: the scoring and every digest (``b"NDCT"``, see ``index/_serial.py``)."""
        meta = {"scoring": self._scoring, "digests": self._table.digests()}
        return _serial.dump(b"NDCT", 1, meta, [])

    @classmethod
    def from_bytes(cls, data: bytes) -> CTPHIndex:
        """Read :meth:`to_bytes` output (the 7-gram tables are rebuilt).

        Raises:
            FormatError: Malformed or truncated data, or an unknown version.
        """
        meta, _ = _serial.load(data, b"NDCT", 1, "CTPHIndex")
        digests = meta.get("digests")
        if not isinstance(digests, list) or not all(isinstance(d, str) for d in digests):
            raise FormatError("saved CTPHIndex is truncated or corrupt")
        try:
            index = cls(scoring=meta.get("scoring", "ssdeep"))
        except ConfigError as exc:
            raise FormatError(f"saved CTPHIndex has bad parameters: {exc}") from None
        index.add_many(digests)
        return index

    def add(self, digest: str | CTPHDigest) -> int:
        """Add one digest and return its id (its position in insertion order).

        Raises:
            FormatError: The digest is malformed.
        """
        text = _digest_text(digest)
        ident: int = self._table.add(text)
        if ident < 0:
            parse_ctph(text)  # raises the error that says why
        return ident

    def add_many(self, digests: Iterable[str | CTPHDigest]) -> list[int]:
        """Add digests in order and return their ids.

        Raises:
            FormatError: A digest is malformed (the ones before it stay added).
        """
        texts = [_digest_text(d) for d in digests]
        start = len(self._table)
        added: int = self._table.add_many(texts)
        if added < len(texts):
            parse_ctph(texts[added])  # raises the error that says why
        return list(range(start, start + added))

    def query(self, digest: str | CTPHDigest, min_score: int = 1) -> list[tuple[int, int]]:
        """Return ``(id, score)`` of every indexed digest scoring ``>= min_score``.

        Sorted by score (highest first), then id.

        Raises:
            FormatError: The digest is malformed.
            ConfigError: ``min_score`` is not an integer from 1 to 100.
        """
        _check_min_score(min_score)
        text = _digest_text(digest)
        hits: list[tuple[int, int]] | None = self._table.query(text, min_score)
        if hits is None:
            parse_ctph(text)  # raises the error that says why
            return []  # pragma: no cover
        return hits

    def pairs(self, min_score: int = 1) -> Iterator[tuple[int, int, int]]:
        """Yield ``(i, j, score)`` with ``i < j`` for every pair scoring ``>= min_score``.

        Pairs come in order of ``i``, then ``j``; the set equals an exhaustive comparison.

        Raises:
            ConfigError: ``min_score`` is not an integer from 1 to 100.
        """
        _check_min_score(min_score)
        a, b, s = self._table.pairs(min_score)
        yield from zip(a.tolist(), b.tolist(), s.tolist(), strict=True)


class TLSHIndex:
    """All-pairs and nearest-digest search over TLSH digests by a vectorised distance.

    Digests are decoded once into a packed ``(n, 35)`` uint8 array; a query computes the
    distance to every row at once in numpy (header terms first, then the body by table
    lookups in four slices, dropping rows as soon as they exceed ``max_distance``). Distances
    equal ``tlsh.diff`` (or ``tlsh.diffxlen`` with ``len_diff=False``). Exhaustive: ``pairs``
    costs O(n**2 / 2) row distances.

    Args:
        len_diff: Include TLSH's input-length term in distances.

    Examples:
        >>> index = TLSHIndex()
        >>> index.add_many(["T1" + "12" * 35, "T1" + "12" * 34 + "13", "T1" + "F0" * 35])
        [0, 1, 2]
        >>> list(index.pairs(max_distance=10))
        [(0, 1, 1)]
    """

    def __init__(self, *, len_diff: bool = True) -> None:
        self._len_diff = len_diff
        self._packed: npt.NDArray[np.uint8] = np.zeros((0, PACKED_WIDTH), dtype=np.uint8)
        self._pending: list[npt.NDArray[np.uint8]] = []
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def to_bytes(self) -> bytes:
        """Serialize: ``len_diff`` and the packed digests (``b"NDTL"``, ``index/_serial.py``)."""
        return _serial.dump(b"NDTL", 1, {"len_diff": self._len_diff}, [self._rows()])

    @classmethod
    def from_bytes(cls, data: bytes) -> TLSHIndex:
        """Read :meth:`to_bytes` output.

        Raises:
            FormatError: Malformed or truncated data, or an unknown version.
        """
        meta, arrays = _serial.load(data, b"NDTL", 1, "TLSHIndex")
        if (
            len(arrays) != 1
            or arrays[0].dtype != np.uint8
            or arrays[0].ndim != 2
            or arrays[0].shape[1] != PACKED_WIDTH
            or not isinstance(meta.get("len_diff"), bool)
        ):
            raise FormatError("saved TLSHIndex is truncated or corrupt")
        index = cls(len_diff=meta["len_diff"])
        index._packed = arrays[0]
        index._count = len(arrays[0])
        return index

    def _rows(self) -> npt.NDArray[np.uint8]:
        if self._pending:
            self._packed = np.concatenate([self._packed, *self._pending])
            self._pending = []
        return self._packed

    def add(self, digest: str) -> int:
        """Add one digest and return its id (its position in insertion order).

        Raises:
            FormatError: The digest is malformed or ``"TNULL"``.
        """
        return self.add_many([digest])[0]

    def add_many(self, digests: Iterable[str]) -> list[int]:
        """Add digests in order and return their ids (none is added if one is malformed).

        Raises:
            FormatError: A digest is malformed or ``"TNULL"``.
        """
        packed = pack_tlsh(digests)
        start = self._count
        self._pending.append(packed)
        self._count += packed.shape[0]
        return list(range(start, self._count))

    def query(self, digest: str, max_distance: int = 100) -> list[tuple[int, int]]:
        """Return ``(id, distance)`` of every digest within ``max_distance``, closest first.

        Raises:
            FormatError: The digest is malformed.
            ConfigError: ``max_distance`` is negative.
        """
        self._check_distance(max_distance)
        query = pack_tlsh([digest])[0]
        rows = self._rows()
        dist = tlsh_distances(query, rows, len_diff=self._len_diff, cutoff=max_distance)
        hit = np.flatnonzero(dist <= max_distance)
        order = np.lexsort((hit, dist[hit]))
        return [(int(hit[k]), int(dist[hit[k]])) for k in order]

    def pairs(self, max_distance: int = 100) -> Iterator[tuple[int, int, int]]:
        """Yield ``(i, j, distance)`` with ``i < j`` for every pair within ``max_distance``.

        Rows are compared in blocks (a distance matrix of about 32 MB at a time).

        Raises:
            ConfigError: ``max_distance`` is negative.
        """
        self._check_distance(max_distance)
        rows = self._rows()
        n = rows.shape[0]
        start = 0
        while start < n - 1:
            others = rows[start + 1 :]
            block = max(1, min(n - 1 - start, _BLOCK_CELLS // others.shape[0]))
            dist = tlsh_distance_matrix(
                rows[start : start + block], others, len_diff=self._len_diff
            )
            # row r of the block is digest start + r; column k is digest start + 1 + k
            later = np.arange(others.shape[0])[None, :] >= np.arange(block)[:, None]
            rr, kk = np.nonzero((dist <= max_distance) & later)
            for r, k, d in zip(rr.tolist(), kk.tolist(), dist[rr, kk].tolist(), strict=True):
                yield start + r, start + 1 + k, d
            start += block

    @staticmethod
    def _check_distance(max_distance: int) -> None:
        if isinstance(max_distance, bool) or not isinstance(max_distance, int) or max_distance < 0:
            raise ConfigError(f"max_distance must be a non-negative integer, got {max_distance!r}")
