"""Banded LSH for MinHash (Indyk and Motwani 1998; Leskovec, Rajaraman, Ullman, MMDS ch. 3).

:func:`plan_lsh` chooses ``(bands, rows)`` from a threshold and reports the predicted rates;
:class:`LSHIndex` stores sketches in numpy arrays (band keys hashed to 64 bits in one sorted
array, no dict of Python sets) and returns every hit with its estimated Jaccard. A pair of
Jaccard ``s`` becomes a candidate with probability ``P(s) = 1 - (1 - s**rows)**bands``.
The whole index lives in memory (the algorithm needs random access to every band key).
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
from collections.abc import Hashable, Iterator, Sequence
from functools import cache
from typing import Literal

import numpy as np
import numpy.typing as npt

from neardup._kernels import engine
from neardup._kernels.sets import bucket_pairs, sorted_unique
from neardup.config import check_choice, check_range
from neardup.errors import ConfigError, IncompatibleSketchError, InputError
from neardup.index._lsh_bytes import dump_index, load_index
from neardup.sketch.minhash import MinHash

__all__ = ["LSHIndex", "LSHPlan", "plan_lsh"]

logger = logging.getLogger(__name__)

U64 = npt.NDArray[np.uint64]
U32 = npt.NDArray[np.uint32]
I64 = npt.NDArray[np.int64]
_MAX64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_MAX32 = np.uint64(0xFFFFFFFF)
_GRID = np.linspace(0.0, 1.0, 4001)
_MIN_SLOTS = 64
_TABLE_FAMILY = "lsh"  # the band-key table kernels
_SKETCH_FAMILY = "minhash"  # band_keys and estimate
#: Plans scored per block of the grid (256 x 4001 float64: 8 MB per temporary).
_BLOCK = 256
#: Largest num_perm the ``weighted`` search accepts: it scores every plan, about
#: ``num_perm * ln(num_perm)`` of them (2048: 17k plans, seconds).
MAX_WEIGHTED_PERM = 2048


@dataclasses.dataclass(frozen=True, slots=True)
class LSHPlan:
    """A banding plan and its predicted rates (uniform prior over Jaccard similarity).

    Attributes:
        bands: Number of bands.
        rows: Slots per band (``bands * rows <= num_perm``; the rest still serve estimates).
        fp: Mean candidate probability of a pair below the threshold, ``∫₀ᵗ P / t``.
        fn: Mean miss probability of a pair at or above it, ``∫ₜ¹ (1 - P) / (1 - t)``.
        threshold: The Jaccard threshold planned for.
        num_perm: Slots per sketch.
        recall_at_threshold: ``P(threshold)``, the chance that a pair exactly at the
            threshold becomes a candidate.
    """

    bands: int
    rows: int
    fp: float
    fn: float
    threshold: float
    num_perm: int
    recall_at_threshold: float

    def probability(self, similarity: float) -> float:
        """Candidate probability of a pair of Jaccard ``similarity``.

        Examples:
            >>> round(plan_lsh(0.8, 128, method="txtfp").probability(0.8), 3)
            0.204
        """
        return float(_prob(np.asarray(similarity), self.bands, self.rows))

    def curve(self, points: int = 11) -> list[tuple[float, float]]:
        """The S-curve as ``(similarity, probability)`` at ``points`` evenly spaced values."""
        xs = np.linspace(0.0, 1.0, points)
        return [
            (float(x), float(p)) for x, p in zip(xs, _prob(xs, self.bands, self.rows), strict=True)
        ]


def _prob(s: npt.NDArray[np.float64], bands: int, rows: int) -> npt.NDArray[np.float64]:
    return 1.0 - (1.0 - s**rows) ** bands


def _rates(threshold: float, bands: int, rows: int) -> tuple[float, float]:
    fp, fn = _rates_many(threshold, np.array([bands]), np.array([rows]))
    return float(fp[0]), float(fn[0])


def _rates_many(
    threshold: float, bands: npt.NDArray[np.int64], rows: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Normalised FP and FN integrals of many plans (trapezoids on a 4001-point grid).

    Computed in blocks of :data:`_BLOCK` plans, so memory stays at a few MB however many plans
    are scored (each plan's integrals depend only on its own row of the grid).
    """
    below = threshold >= _GRID
    above = threshold <= _GRID
    fp = np.empty(len(bands), dtype=np.float64)
    fn = np.empty(len(bands), dtype=np.float64)
    for lo in range(0, len(bands), _BLOCK):
        b, r = bands[lo : lo + _BLOCK], rows[lo : lo + _BLOCK]
        p = 1.0 - (1.0 - _GRID[None, :] ** r[:, None]) ** b[:, None]
        fp[lo : lo + _BLOCK] = np.trapezoid(p[:, below], _GRID[below], axis=1) / threshold
        fn[lo : lo + _BLOCK] = np.trapezoid(1.0 - p[:, above], _GRID[above], axis=1) / (
            1.0 - threshold
        )
    return fp, fn


def _all_plans(num_perm: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Every ``(bands, rows)`` with ``bands * rows <= num_perm``: rows ascending, then bands."""
    rows = np.arange(1, num_perm + 1, dtype=np.int64)
    counts = num_perm // rows
    starts = np.cumsum(counts) - counts
    rs = np.repeat(rows, counts)
    bs = np.arange(len(rs), dtype=np.int64) - np.repeat(starts, counts) + 1
    return bs, rs


def _txtfp_error(threshold: float, bands: int, rows: int) -> np.float32:
    """txtfp's ``for_threshold`` objective: f32 trapezoids with 200 steps, unit weights."""
    f32 = np.float32
    n = 200

    def integral(lo: float, hi: float, miss: bool) -> np.float32:
        step = f32((f32(hi) - f32(lo)) / f32(n))
        xs = f32(lo) + np.arange(n + 1, dtype=np.float32) * step
        p = f32(1) - (f32(1) - xs ** f32(rows)) ** f32(bands)
        y = np.clip(f32(1) - p if miss else p, f32(0), f32(1)).astype(np.float32)
        total = f32(0)
        for i in range(n):
            total = f32(total + f32(f32(y[i] + y[i + 1]) * f32(0.5)) * step)
        return total

    return f32(integral(0.0, threshold, False) + integral(threshold, 1.0, True))


def plan_lsh(
    threshold: float,
    num_perm: int,
    *,
    fp_weight: float = 0.5,
    fn_weight: float = 0.5,
    method: Literal["weighted", "recall", "txtfp"] = "weighted",
    recall: float = 0.99,
) -> LSHPlan:
    """Choose ``(bands, rows)`` for a Jaccard threshold.

    Methods:
        * ``"weighted"`` -- minimise ``fp_weight * fp + fn_weight * fn`` over every
          ``bands * rows <= num_perm`` (``fp``, ``fn`` normalised by interval length);
          ``num_perm`` up to :data:`MAX_WEIGHTED_PERM`.
        * ``"recall"`` -- the lowest ``fp`` among plans with ``P(threshold) >= recall``; when
          ``num_perm`` is too small for that, the plan with the highest ``P(threshold)``
          (logged as a warning; ``recall_at_threshold`` says what it reaches).
        * ``"txtfp"`` -- txtfp 0.2.2's ``LshIndexBuilder.for_threshold``: divisors of
          ``num_perm`` only, f32 trapezoid objective, ties to fewer bands.

    Raises:
        ConfigError: threshold outside (0, 1), num_perm outside [1, 65536] (``weighted``:
            [1, :data:`MAX_WEIGHTED_PERM`]), negative weights, bad method.

    Examples:
        >>> p = plan_lsh(0.7, 128, method="txtfp")
        >>> p.bands, p.rows
        (16, 8)
        >>> p = plan_lsh(0.8, 128, method="recall")
        >>> p.recall_at_threshold >= 0.99
        True
    """
    check_range("threshold", threshold, 0.0, 1.0)
    if not 0.0 < threshold < 1.0:
        raise ConfigError(f"threshold must be strictly between 0 and 1, got {threshold}")
    check_range("num_perm", num_perm, 1, 1 << 16, integer=True)
    check_range("fp_weight", fp_weight, 0.0, 1e6)
    check_range("fn_weight", fn_weight, 0.0, 1e6)
    check_range("recall", recall, 0.0, 1.0)
    check_choice("method", method, ("weighted", "recall", "txtfp"))
    if method == "txtfp":
        best: tuple[np.float32, int] | None = None
        for b in range(1, num_perm + 1):
            if num_perm % b == 0:
                err = _txtfp_error(threshold, b, num_perm // b)
                if best is None or err < best[0]:
                    best = (err, b)
        assert best is not None
        return _plan(threshold, num_perm, best[1], num_perm // best[1])
    return _search(threshold, num_perm, fp_weight, fn_weight, method, recall)


@cache
def _search(
    threshold: float, num_perm: int, fp_weight: float, fn_weight: float, method: str, recall: float
) -> LSHPlan:
    """The ``weighted`` and ``recall`` searches of :func:`plan_lsh` (memoized)."""
    bs, rs = _all_plans(num_perm)
    if method == "weighted":
        if fp_weight + fn_weight == 0:
            raise ConfigError("fp_weight and fn_weight cannot both be 0; use 0.5 and 0.5")
        if num_perm > MAX_WEIGHTED_PERM:
            raise ConfigError(
                f"the weighted search scores every (bands, rows) plan and takes num_perm up "
                f"to {MAX_WEIGHTED_PERM}, got {num_perm}; use method='recall' (neardup plan "
                "--mode recall), or plan for fewer slots and use bands x rows of them"
            )
        fp, fn = _rates_many(threshold, bs, rs)
        # lowest cost; ties go to more slots used, then fewer bands
        best = np.lexsort((bs, -(bs * rs), fp_weight * fp + fn_weight * fn))[0]
        return _plan(threshold, num_perm, int(bs[best]), int(rs[best]))
    reach = 1.0 - (1.0 - threshold**rs) ** bs
    ok = reach >= recall
    if ok.any():
        # For fixed rows, reach and fp both grow with bands: only the fewest bands that reach
        # the recall can have the lowest fp (ties go to fewer bands), one plan per rows value.
        first = ok & ~np.concatenate(([False], ok[:-1] & (rs[1:] == rs[:-1])))
        fp, _ = _rates_many(threshold, bs[first], rs[first])
        best = np.lexsort((bs[first], fp))[0]
        return _plan(threshold, num_perm, int(bs[first][best]), int(rs[first][best]))
    best = np.lexsort((bs, -reach))[0]
    plan = _plan(threshold, num_perm, int(bs[best]), int(rs[best]))
    logger.warning(
        "num_perm=%d cannot reach recall %.3f at threshold %.2f; best plan (%d bands x %d rows) "
        "finds a pair at the threshold with probability %.3f: raise num_perm for more",
        num_perm,
        recall,
        threshold,
        plan.bands,
        plan.rows,
        plan.recall_at_threshold,
    )
    return plan


def _plan(threshold: float, num_perm: int, bands: int, rows: int) -> LSHPlan:
    fp, fn = _rates(threshold, bands, rows)
    reach = float(_prob(np.asarray(threshold), bands, rows))
    return LSHPlan(bands, rows, fp, fn, threshold, num_perm, reach)


def _fold(values: U64) -> U32:
    """32-bit fingerprint of each slot (exact for slots below 2**32, as datasketch's)."""
    return ((values ^ (values >> np.uint64(32))) & _MAX32).astype(np.uint32)


class LSHIndex:
    """Banded LSH index over MinHash sketches, tuned for recall, with estimates on every hit.

    Args:
        threshold: The Jaccard similarity that should be found.
        num_perm: Slots per sketch.
        bands: Number of bands (default: planned, see ``recall``).
        rows: Slots per band (default: ``num_perm // bands`` or planned).
        recall: Planned probability that a pair exactly at ``threshold`` becomes a
            candidate (default 0.99; logged when ``num_perm`` cannot reach it).

    Memory: about ``4 * num_perm + 12 * bands + 1`` bytes of arrays per document (32-bit slot
    fingerprints for the estimates, sorted band keys and row ids), plus the key object and a
    dict entry (about 100 bytes). :attr:`nbytes` reports the arrays.

    Examples:
        >>> from neardup.sketch.minhash import MinHasher
        >>> h = MinHasher(num_perm=64)
        >>> idx = LSHIndex(threshold=0.5, num_perm=64)
        >>> text = "a b c d e f g h i j k l m n o p"
        >>> idx.add("doc1", h.sketch(text))
        >>> idx.add("doc2", h.sketch(text + " q"))
        >>> [(k, round(s, 1)) for k, s in idx.query(h.sketch(text))][0]
        ('doc1', 1.0)
        >>> [(a, b) for a, b, _ in idx.pairs()]
        [('doc1', 'doc2')]
    """

    def __init__(
        self,
        threshold: float = 0.8,
        num_perm: int = 128,
        *,
        bands: int | None = None,
        rows: int | None = None,
        recall: float = 0.99,
    ) -> None:
        check_range("num_perm", num_perm, 1, 1 << 16, integer=True)
        if bands is None and rows is None:
            self.plan = plan_lsh(threshold, num_perm, method="recall", recall=recall)
        else:
            b = bands if bands is not None else num_perm // int(rows or 1)
            r = rows if rows is not None else num_perm // int(bands or 1)
            check_range("bands", b, 1, num_perm, integer=True)
            check_range("rows", r, 1, num_perm, integer=True)
            if (rows is None or bands is None) and num_perm % (bands or rows or 1):
                raise ConfigError(
                    f"num_perm={num_perm} is not divisible into bands of equal size "
                    f"(bands={bands}, rows={rows}); give both bands and rows, or a divisor"
                )
            if b * r > num_perm:
                raise ConfigError(
                    f"bands * rows = {b * r} exceeds num_perm={num_perm}; lower one of them"
                )
            check_range("threshold", threshold, 0.0, 1.0)
            self.plan = _plan(min(max(threshold, 1e-9), 1 - 1e-9), num_perm, b, r)
        self.num_perm = num_perm
        self._params: tuple[str, str] | None = None
        self._clear()

    def _clear(self) -> None:
        self._sig = np.empty((0, self.num_perm), dtype=np.uint32)
        self._state = np.empty(0, dtype=np.uint8)  # 0 removed, 1 live, 2 live but empty
        self._mark = np.zeros(0, dtype=np.int64)  # query stamps (see _kernels/lsh)
        self._keys: list[Hashable | None] = []
        self._row: dict[Hashable, int] = {}
        self._n = 0
        self._dead = 0
        self._tkeys = np.zeros(_MIN_SLOTS, dtype=np.uint64)
        self._thead = np.full(_MIN_SLOTS, -1, dtype=np.int64)
        self._erow = np.empty(0, dtype=np.int64)
        self._enext = np.empty(0, dtype=np.int64)
        self._meta = np.zeros(3, dtype=np.int64)  # slots used, entries used, query stamp
        self._bind()

    def _bind(self) -> None:
        """Look up the kernels once (the index pickles the family names, not modules)."""
        self._lsh = engine.kernels(_TABLE_FAMILY)
        self._mh = engine.kernels(_SKETCH_FAMILY)

    def __getstate__(self) -> dict[str, object]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("_lsh", "_mh")}
        state["_mark"] = np.zeros(0, dtype=np.int64)
        state["_meta"] = self._meta.copy()
        state["_meta"][2] = 0
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._mark = np.zeros(len(self._state), dtype=np.int64)
        self._bind()

    @property
    def bands(self) -> int:
        """Number of bands."""
        return self.plan.bands

    @property
    def rows(self) -> int:
        """Slots per band."""
        return self.plan.rows

    def __len__(self) -> int:
        return len(self._row)

    def __contains__(self, key: object) -> bool:
        return key in self._row

    def __repr__(self) -> str:
        b, r = self.bands, self.rows
        return f"LSHIndex(bands={b}, rows={r}, num_perm={self.num_perm}, n={len(self)})"

    @property
    def nbytes(self) -> int:
        """Bytes held by the index's numpy arrays (not the Python keys and their dict)."""
        arrays = (self._sig, self._state, self._mark, self._tkeys, self._thead)
        return sum(int(a.nbytes) for a in arrays) + int(self._erow.nbytes + self._enext.nbytes)

    # ------------------------------------------------------------------ adding

    def add(self, key: Hashable, mh: MinHash) -> None:
        """Index one sketch under ``key`` (an existing ``key`` is replaced).

        One numba call: the per-document path of datasketch's ``insert`` pattern.
        """
        if (
            type(mh) is not MinHash
            or mh.hashvalues.shape[0] != self.num_perm
            or self._params != (mh.scheme, mh.params)
            or key in self._row
        ):
            self.add_many([key], [mh])
            return
        r = self._n
        if (
            r >= len(self._state)
            or self._meta[1] + self.plan.bands > len(self._erow)
            or 2 * (self._meta[0] + self.plan.bands) > len(self._tkeys)
        ):
            self._reserve(1)
        self._lsh.add_rows(
            mh.hashvalues, r, self._sig, self._state, self.plan.bands, self.plan.rows,
            self._tkeys, self._thead, self._erow, self._enext, self._meta,
        )  # fmt: skip
        self._keys.append(key)
        self._row[key] = r
        self._n = r + 1

    def add_many(self, keys: Sequence[Hashable], sigs: Sequence[MinHash] | U64) -> None:
        """Index many sketches at once (the fast path).

        Args:
            keys: One hashable key per sketch; no repeats within the call.
            sigs: MinHash values, or a ``(n, num_perm)`` uint64 array from
                ``MinHasher.sketch_many`` (arrays carry no scheme: do not mix presets).

        Raises:
            InputError: Lengths differ, or a key repeats.
            IncompatibleSketchError: Wrong ``num_perm``, or another scheme or params than the
                sketches already indexed.
        """
        values = self._matrix(sigs)
        if len(keys) != len(values):
            raise InputError(f"add_many got {len(keys)} keys for {len(values)} sketches")
        if len(set(keys)) != len(keys):
            raise InputError("add_many got the same key twice; keys must be unique")
        for key in keys:
            if key in self._row:
                self.remove(key)
        self._maybe_compact()
        n = len(values)
        if not n:
            return
        self._reserve(n)
        lo = self._n
        self._lsh.add_rows(
            np.ascontiguousarray(values), lo, self._sig, self._state, self.plan.bands,
            self.plan.rows, self._tkeys, self._thead, self._erow, self._enext, self._meta,
        )  # fmt: skip
        for i, key in enumerate(keys):
            self._keys.append(key)
            self._row[key] = lo + i
        self._n = lo + n

    def _matrix(self, sigs: Sequence[MinHash] | U64) -> U64:
        if isinstance(sigs, np.ndarray):
            values = np.asarray(sigs, dtype=np.uint64)
            if values.ndim != 2 or values.shape[1] != self.num_perm:
                raise IncompatibleSketchError(
                    f"expected a (n, {self.num_perm}) array of sketches, got {values.shape}"
                )
            return values
        if not sigs:
            return np.empty((0, self.num_perm), dtype=np.uint64)
        for mh in sigs:
            if not isinstance(mh, MinHash):
                raise IncompatibleSketchError(f"expected MinHash values, got {type(mh).__name__}")
            if mh.num_perm != self.num_perm:
                raise IncompatibleSketchError(
                    f"sketch has {mh.num_perm} slots, the index {self.num_perm}; "
                    "use an index with the sketches' num_perm"
                )
            if self._params is None:
                self._params = (mh.scheme, mh.params)
            elif (mh.scheme, mh.params) != self._params:
                raise IncompatibleSketchError(
                    f"sketch made with {mh.scheme}/{mh.params}, the index holds "
                    f"{self._params[0]}/{self._params[1]}; index sketches of one MinHasher"
                )
        return np.stack([mh.hashvalues for mh in sigs])

    def _reserve(self, k: int) -> None:
        """Room for ``k`` more rows, their entries, and a table at most half full."""
        need = self._n + k
        if need > len(self._state):
            cap = max(need, 2 * len(self._state), 64)
            sig = np.empty((cap, self.num_perm), dtype=np.uint32)
            sig[: self._n] = self._sig[: self._n]
            state = np.zeros(cap, dtype=np.uint8)
            state[: self._n] = self._state[: self._n]
            mark = np.zeros(cap, dtype=np.int64)
            mark[: self._n] = self._mark[: self._n]
            self._sig, self._state, self._mark = sig, state, mark
        entries = int(self._meta[1]) + k * self.plan.bands
        if entries > len(self._erow):
            cap = max(entries, 2 * len(self._erow), 1024)
            erow = np.empty(cap, dtype=np.int64)
            enext = np.empty(cap, dtype=np.int64)
            used = int(self._meta[1])
            erow[:used] = self._erow[:used]
            enext[:used] = self._enext[:used]
            self._erow, self._enext = erow, enext
        slots = len(self._tkeys)
        while 2 * (int(self._meta[0]) + k * self.plan.bands) > slots:
            slots *= 2
        if slots != len(self._tkeys):
            self._tkeys, self._thead = self._lsh.rehash(self._tkeys, self._thead, slots)

    def remove(self, key: Hashable) -> None:
        """Remove ``key`` from the index.

        Raises:
            InputError: ``key`` is not in the index.
        """
        row = self._row.pop(key, None)
        if row is None:
            raise InputError(f"key {key!r} is not in the index; check `key in index` first")
        self._state[row] = 0
        self._keys[row] = None
        self._dead += 1

    def count(self) -> int:
        """Number of indexed keys (``len(index)``; datasketch users know it as a count)."""
        return len(self._row)

    def merge(self, other: LSHIndex) -> None:
        """Add every key of ``other`` to this index (``other`` is unchanged).

        A key indexed in both takes ``other``'s sketch, as :meth:`add` would.

        Raises:
            IncompatibleSketchError: Different ``num_perm``, ``bands`` or ``rows``, or
                sketches of another scheme or params.

        Examples:
            >>> from neardup.sketch.minhash import MinHasher
            >>> h = MinHasher(num_perm=32)
            >>> a, b = LSHIndex(0.5, 32), LSHIndex(0.5, 32)
            >>> a.add("x", h.sketch_tokens(["p", "q"])); b.add("y", h.sketch_tokens(["p", "q"]))
            >>> a.merge(b); a.count(), [k for k, _ in a.query(h.sketch_tokens(["p", "q"]))]
            (2, ['x', 'y'])
        """
        if not isinstance(other, LSHIndex) or (self.num_perm, self.bands, self.rows) != (
            other.num_perm,
            other.bands,
            other.rows,
        ):
            raise IncompatibleSketchError(
                "cannot merge LSH indexes of different num_perm, bands or rows; build both "
                "with the same parameters"
            )
        if self._params and other._params and self._params != other._params:
            raise IncompatibleSketchError(
                f"cannot merge an index of {other._params[0]}/{other._params[1]} sketches into "
                f"one of {self._params[0]}/{self._params[1]}; index sketches of one MinHasher"
            )
        self._params = self._params or other._params
        rows = np.flatnonzero(other._state[: other._n] != 0)
        keys = [other._keys[i] for i in rows.tolist()]
        for key in keys:
            if key in self._row:
                self.remove(key)
        self._maybe_compact()
        n = len(rows)
        if not n:
            return
        # the 32-bit slot fingerprints are their own fingerprints; empty rows stay empty
        values = other._sig[rows].astype(np.uint64)
        values[other._state[rows] == 2] = _MAX32
        self._reserve(n)
        lo = self._n
        self._lsh.add_rows(
            np.ascontiguousarray(values), lo, self._sig, self._state, self.plan.bands,
            self.plan.rows, self._tkeys, self._thead, self._erow, self._enext, self._meta,
        )  # fmt: skip
        for i, key in enumerate(keys):
            self._keys.append(key)
            self._row[key] = lo + i
        self._n = lo + n

    def get_counts(self) -> list[dict[int, int]]:
        """Per band, the number of indexed documents in each bucket (64-bit band key ->
        count), as datasketch's ``MinHashLSH.get_counts``. Empty sketches are in no bucket.

        Examples:
            >>> from neardup.sketch.minhash import MinHasher
            >>> h = MinHasher(num_perm=16)
            >>> idx = LSHIndex(0.5, 16, bands=4, rows=4)
            >>> idx.add_many(["a", "b"], [h.sketch_tokens(["x"]), h.sketch_tokens(["x"])])
            >>> [sorted(c.values()) for c in idx.get_counts()]
            [[2], [2], [2], [2]]
        """
        live = np.flatnonzero(self._state[: self._n] == 1)
        keys = self._band_keys(self._sig[live])
        out: list[dict[int, int]] = []
        for j in range(self.bands):
            uniq, counts = np.unique(keys[:, j], return_counts=True)
            out.append(dict(zip(uniq.tolist(), counts.tolist(), strict=True)))
        return out

    def _maybe_compact(self) -> None:
        """Drop removed rows (renumbering the rest) once they are a quarter of the index."""
        if self._dead <= max(64, self._n // 4):
            return
        live = np.flatnonzero(self._state[: self._n] != 0)
        sig, state = self._sig[live], self._state[live]
        keys = [self._keys[i] for i in live.tolist()]
        params = self._params
        self._clear()
        self._params = params
        self._reserve(len(live))
        self._sig[: len(live)] = sig
        self._state[: len(live)] = state
        self._keys = keys
        self._row = {k: i for i, k in enumerate(keys)}
        self._n = len(live)
        self._lsh.insert_rows(
            np.flatnonzero(state == 1).astype(np.int64), self._sig, self.plan.bands,
            self.plan.rows, self._tkeys, self._thead, self._erow, self._enext, self._meta,
        )  # fmt: skip

    # ------------------------------------------------------------------ lookups

    def _band_keys(self, sig32: U32) -> U64:
        keys: U64 = self._mh.band_keys(np.ascontiguousarray(sig32), self.bands, self.rows)
        return keys

    def query(
        self, mh: MinHash, *, min_similarity: float | None = None
    ) -> list[tuple[Hashable, float]]:
        """Keys sharing a band with ``mh``, each with its estimated Jaccard, best first.

        One numba call (probe, walk, estimate, sort): datasketch's per-document pattern.

        Args:
            mh: The query sketch (same ``num_perm``, scheme and params as the index).
            min_similarity: Keep only hits whose estimate is at least this.
        """
        if (
            type(mh) is not MinHash
            or mh.hashvalues.shape[0] != self.num_perm
            or (self._params is not None and self._params != (mh.scheme, mh.params))
        ):
            return self.query_many([mh], min_similarity=min_similarity)[0]
        if not self._n:
            return []
        _, rows, est = self._lsh.query_rows(
            mh.hashvalues, self.plan.bands, self.plan.rows, self._tkeys, self._thead,
            self._erow, self._enext, self._state, self._sig, self._mark, self._meta,
            -1.0 if min_similarity is None else float(min_similarity),
        )  # fmt: skip
        return list(zip(map(self._keys.__getitem__, rows.tolist()), est.tolist(), strict=True))

    def query_many(
        self, sigs: Sequence[MinHash] | U64, *, min_similarity: float | None = None
    ) -> list[list[tuple[Hashable, float]]]:
        """:meth:`query` for many sketches at once (one list of hits per sketch)."""
        values = self._matrix(sigs)
        if not len(values) or not self._n:
            return [[] for _ in range(len(values))]
        offsets, rows, est = self._lsh.query_rows(
            np.ascontiguousarray(values), self.plan.bands, self.plan.rows, self._tkeys,
            self._thead, self._erow, self._enext, self._state, self._sig, self._mark,
            self._meta, -1.0 if min_similarity is None else float(min_similarity),
        )  # fmt: skip
        hit_keys = list(map(self._keys.__getitem__, rows.tolist()))
        hit_est = est.tolist()
        return [
            list(zip(hit_keys[lo:hi], hit_est[lo:hi], strict=True))
            for lo, hi in itertools.pairwise(offsets.tolist())
        ]

    def _estimate(self, a32: U32, ai: I64, rows: I64) -> npt.NDArray[np.float64]:
        est: npt.NDArray[np.float64] = self._mh.estimate(
            np.ascontiguousarray(a32), ai, self._sig, rows
        )
        return est

    def pair_rows(
        self, *, min_similarity: float | None = None
    ) -> tuple[I64, I64, npt.NDArray[np.float64]]:
        """Every candidate pair once as arrays ``(row_a, row_b, estimate)``, ``row_a < row_b``.

        Rows are insertion slots; :meth:`key_of` maps them back to keys. This is the bulk
        form of :meth:`pairs` (no Python object per pair), for pipelines.
        """
        self._maybe_compact()
        live = np.flatnonzero(self._state[: self._n] == 1)
        flat = self._band_keys(self._sig[live]).ravel()
        order = np.argsort(flat, kind="stable")
        srows = np.repeat(live, self.bands)[order]
        # every pair in each bucket (no cap); a pair shared by several bands repeats here
        a, b, _, _ = bucket_pairs(flat[order], srows.astype(np.int64), self._n + 1)
        if not len(a):
            return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float64)
        codes = sorted_unique(a * np.int64(self._n) + b)
        a, b = codes // self._n, codes % self._n
        est = self._estimate(self._sig, a, b)
        if min_similarity is not None:
            ok = est >= min_similarity
            a, b, est = a[ok], b[ok], est[ok]
        return a, b, est

    def to_bytes(self) -> bytes:
        """Serialize the index: params, keys (JSON) and slot fingerprints (see ``_lsh_bytes``).

        Raises:
            InputError: A key is not a str or int (only those can be saved; pickle keeps any).
        """
        return dump_index(self)

    @classmethod
    def from_bytes(cls, data: bytes) -> LSHIndex:
        """Read :meth:`to_bytes` output (the band-key table is rebuilt).

        Raises:
            FormatError: Malformed or truncated data, or an unknown version.
        """
        return load_index(cls, data)

    def key_of(self, row: int) -> Hashable:
        """The key indexed in insertion slot ``row`` (see :meth:`pair_rows`)."""
        return self._keys[row]

    def band_keys(self, sigs: Sequence[MinHash] | U64) -> U64:
        """The ``(n, bands)`` 64-bit band keys this index computes for sketches: documents
        are candidates exactly when they share a key in the same column. For engines that
        group by key themselves (Spark, the SQLite store)."""
        keys: U64 = self._band_keys(_fold(self._matrix(sigs)))
        return keys

    def pairs(
        self, *, min_similarity: float | None = None
    ) -> Iterator[tuple[Hashable, Hashable, float]]:
        """Every candidate pair once, as ``(key_a, key_b, estimated Jaccard)``.

        ``key_a`` was indexed before ``key_b``; pairs come in insertion order of ``key_a``.
        Candidates come from one sort of all band keys (no per-document queries).
        """
        a, b, est = self.pair_rows(min_similarity=min_similarity)
        get = self._keys.__getitem__
        yield from zip(map(get, a.tolist()), map(get, b.tolist()), est.tolist(), strict=True)
