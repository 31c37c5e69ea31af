"""Reference improved consistent weighted sampling (Ioffe 2010), numpy, float32 throughout.

For sample ``i`` and a feature ``j`` of weight ``v_j > 0`` (``lv_j = log v_j`` in float32):
``t = floor(lv_j / r_ij + beta_ij)``; the *dense* form (datasketch's ``minhash``) ranks
``ln_a = (ln_c_ij - (t - beta_ij) * r_ij) - r_ij``, the *sparse* form (``minhash_many``)
``ln_a = ln_c_ij - ((t - beta_ij) + 1) * r_ij``; the sample is ``(k, t_k)`` of the first
feature ``k`` with the smallest ``ln_a``. Every operation rounds to float32, as datasketch's.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError

__all__ = ["icws"]

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]


def _shape(a: F32) -> str:
    return f"({a.shape[0]}, {a.shape[1]})"


def icws(
    cidx: I64, logv: F32, indptr: I64, rs: F32, ln_cs: F32, betas: F32, sparse_form: bool
) -> I64:
    """``(n_docs, sample_size, 2)`` samples ``(k, t)`` of CSR rows (empty rows give -1).

    Raises:
        ConfigError: ``rs``, ``ln_cs`` and ``betas`` differ in shape, or ``cidx`` and
            ``logv`` in length.
        IndexError: A column is out of range.
    """
    if ln_cs.shape != rs.shape or betas.shape != rs.shape:
        raise ConfigError(
            "rs, ln_cs and betas must have one shape, got "
            f"{_shape(rs)}, {_shape(ln_cs)} and {_shape(betas)}"
        )
    if len(cidx) != len(logv):
        raise ConfigError(f"cidx and logv differ in length ({len(cidx)} and {len(logv)})")
    n_docs = len(indptr) - 1
    size = rs.shape[0]
    out = np.full((n_docs, size, 2), -1, dtype=np.int64)
    one = np.float32(1)
    for d in range(n_docs):
        lo, hi = int(indptr[d]), int(indptr[d + 1])
        if lo == hi:
            continue
        cols = cidx[lo:hi]
        lv = logv[lo:hi][None, :]
        r, b, c = rs[:, cols], betas[:, cols], ln_cs[:, cols]
        t = np.floor(lv / r + b).astype(np.float32)
        # the order of operations is datasketch's (float32 rounding at each step)
        ln_a = (c - ((t - b) + one) * r) if sparse_form else ((c - (t - b) * r) - r)
        k = np.argmin(ln_a, axis=1)
        out[d, :, 0] = cols[k]
        out[d, :, 1] = t[np.arange(size), k].astype(np.int64)
    return out
