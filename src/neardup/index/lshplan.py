"""Planning banded LSH: :func:`plan_lsh` chooses ``(bands, rows)`` for a Jaccard threshold.

A pair of Jaccard ``s`` becomes a candidate with probability ``P(s) = 1 - (1 - s**rows)**bands``
(Indyk and Motwani 1998; Leskovec, Rajaraman, Ullman, MMDS ch. 3); :class:`LSHPlan` reports
the predicted rates of a plan. :mod:`neardup.index.lsh` re-exports both.
"""

from __future__ import annotations

import dataclasses
import logging
from functools import cache
from typing import Literal

import numpy as np
import numpy.typing as npt

from neardup.config import check_choice, check_range
from neardup.errors import ConfigError

__all__ = ["MAX_WEIGHTED_PERM", "LSHPlan", "plan_lsh"]

logger = logging.getLogger(__name__)

_GRID = np.linspace(0.0, 1.0, 4001)
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
