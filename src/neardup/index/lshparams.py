"""datasketch-compatible LSH parameter search: the (bands, rows) minimising weighted FP + FN.

datasketch chooses ``(b, r)`` by integrating the false-positive and false-negative areas of
the S-curve ``P(s) = 1 - (1 - s**r)**b`` (Jaccard, ``MinHashLSH``) or of its containment
form with ``s = t / (1 + x/q - t)`` (``MinHashLSHEnsemble``, Zhu et al., "LSH Ensemble",
VLDB 2016) and taking the first minimum of ``fp * w_fp + fn * w_fn`` in its loop order.
Here the integrals are Gauss-Legendre sums vectorized over every candidate (exact to
rounding for the Jaccard polynomials), so the grid search takes milliseconds instead of
seconds and picks the same plan.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import numpy as np
import numpy.typing as npt

from neardup.config import check_range

__all__ = ["containment_params", "jaccard_params"]

F64 = npt.NDArray[np.float64]


@cache
def _nodes(n: int) -> tuple[F64, F64]:
    x, w = np.polynomial.legendre.leggauss(n)
    return x, w


def _grid(lo: float, hi: float, n: int) -> tuple[F64, F64]:
    """Nodes and weights of an n-point Gauss-Legendre rule on [lo, hi]."""
    x, w = _nodes(n)
    half = (hi - lo) / 2.0
    return lo + half * (x + 1.0), half * w


def _first_min(error: F64, exact: Callable[[int], float] | None = None) -> int:
    """Index of datasketch's choice: the first strict minimum in loop order.

    Candidates within 1e-9 (relative) of the minimum differ only by integration rounding;
    when scipy is installed they are re-ranked with ``scipy.integrate.quad`` (datasketch's
    integrator, via ``exact``) so near-ties resolve as datasketch resolves them.
    """
    best = float(error.min())
    close = np.flatnonzero(error <= best + abs(best) * 1e-9 + 1e-300)
    if len(close) == 1 or exact is None:
        return int(close[0])
    try:
        import scipy.integrate  # noqa: F401
    except ImportError:
        return int(close[0])
    top, pick = float("inf"), int(close[0])
    for i in close.tolist():
        e = exact(i)
        if e < top:
            top, pick = e, i
    return pick


@cache
def jaccard_params(
    threshold: float, num_perm: int, fp_weight: float = 0.5, fn_weight: float = 0.5
) -> tuple[int, int]:
    """datasketch ``MinHashLSH``'s ``(b, r)`` for a Jaccard threshold.

    Loop order ``b = 1..num_perm``, ``r = 1..num_perm // b``; the first minimum wins.

    Examples:
        >>> jaccard_params(0.9, 128)
        (5, 25)
    """
    check_range("threshold", threshold, 0.0, 1.0)
    check_range("num_perm", num_perm, 1, 1 << 16, integer=True)
    pairs = np.array(
        [(b, r) for b in range(1, num_perm + 1) for r in range(1, num_perm // b + 1)],
        dtype=np.float64,
    )
    b, r = pairs[:, :1], pairs[:, 1:]
    n = max(64, num_perm // 2 + 8)
    s, w = _grid(0.0, threshold, n)
    fp = (1.0 - (1.0 - s[None, :] ** r) ** b) @ w
    s, w = _grid(threshold, 1.0, n)
    fn = ((1.0 - s[None, :] ** r) ** b) @ w

    def exact(i: int) -> float:
        from scipy.integrate import quad

        bb, rr = float(pairs[i, 0]), float(pairs[i, 1])
        a, _ = quad(lambda x: 1 - (1 - x**rr) ** bb, 0.0, threshold)
        c, _ = quad(lambda x: 1 - (1 - (1 - x**rr) ** bb), threshold, 1.0)
        return float(a * fp_weight + c * fn_weight)

    i = _first_min(fp * fp_weight + fn * fn_weight, exact)
    return int(pairs[i, 0]), int(pairs[i, 1])


@cache
def containment_params(
    threshold: float,
    num_perm: int,
    max_r: int,
    xq: float,
    fp_weight: float = 0.5,
    fn_weight: float = 0.5,
) -> tuple[int, int]:
    """datasketch ``MinHashLSHEnsemble``'s ``(b, r)`` for a containment threshold when the
    partition's upper set size over the query size is ``xq``.

    Loop order ``b = 1..num_perm``, ``r = 1..max_r`` with ``b * r <= num_perm``.

    Examples:
        >>> containment_params(0.5, 128, 8, 1.0)
        (32, 4)
    """
    check_range("threshold", threshold, 0.0, 1.0)
    pairs = np.array(
        [(b, r) for b in range(1, num_perm + 1) for r in range(1, max_r + 1) if b * r <= num_perm],
        dtype=np.float64,
    )
    b, r = pairs[:, :1], pairs[:, 1:]
    n = 200

    def prob(t: F64) -> F64:
        s = t[None, :] / (1.0 + xq - t[None, :])
        out: F64 = 1.0 - (1.0 - s**r) ** b
        return out

    hi_fp = threshold if xq >= threshold else xq
    t, w = _grid(0.0, hi_fp, n)
    fp = prob(t) @ w
    if xq >= 1.0:
        t, w = _grid(threshold, 1.0, n)
        fn = (1.0 - prob(t)) @ w
    elif xq >= threshold:
        t, w = _grid(threshold, xq, n)
        fn = (1.0 - prob(t)) @ w
    else:
        fn = np.zeros(len(pairs))

    def exact(i: int) -> float:
        from scipy.integrate import quad

        bb, rr = float(pairs[i, 0]), float(pairs[i, 1])

        def p(x: float) -> float:
            return float(1 - (1 - (x / (1 + xq - x)) ** rr) ** bb)

        a, _ = quad(p, 0.0, hi_fp)
        c = 0.0
        if xq >= 1.0:
            c, _ = quad(lambda x: 1 - p(x), threshold, 1.0)
        elif xq >= threshold:
            c, _ = quad(lambda x: 1 - p(x), threshold, xq)
        return float(a * fp_weight + c * fn_weight)

    i = _first_min(fp * fp_weight + fn * fn_weight, exact)
    return int(pairs[i, 0]), int(pairs[i, 1])
