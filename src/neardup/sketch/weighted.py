"""Weighted MinHash by improved consistent weighted sampling: WeightedMinHasher, WeightedMinHash.

Ioffe, "Improved Consistent Sampling, Weighted Minhash and L1 Sketching" (ICDM 2010). For
non-negative weight vectors ``u, v`` the probability that one sample agrees is the weighted
(generalized) Jaccard similarity ``sum(min(u, v)) / sum(max(u, v))``. The random parameters
(``r ~ Gamma(2, 1)``, ``c ~ Gamma(2, 1)``, ``beta ~ U(0, 1)``, drawn from
``numpy.random.RandomState(seed)``) and the float32 arithmetic equal datasketch 2.0.0's
``WeightedMinHashGenerator``, so the samples are the same. The batch path is the kernel in
:mod:`neardup._kernels.weighted`. See ``docs/datasketch.md``.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Literal

import numpy as np
import numpy.typing as npt

from neardup._kernels import engine
from neardup.config import check_range
from neardup.errors import EmptyInputError, IncompatibleSketchError, InputError

__all__ = ["WeightedMinHash", "WeightedMinHasher", "weighted_jaccard"]

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]


def weighted_jaccard(u: npt.ArrayLike, v: npt.ArrayLike) -> float:
    """The exact weighted Jaccard ``sum(min) / sum(max)`` of two non-negative vectors
    (1.0 for two zero vectors).

    Examples:
        >>> weighted_jaccard([1, 2, 0], [2, 1, 1])
        0.4
    """
    a = np.asarray(u, dtype=np.float64)
    b = np.asarray(v, dtype=np.float64)
    top = float(np.maximum(a, b).sum())
    return 1.0 if top == 0 else float(np.minimum(a, b).sum()) / top


@cache
def _parameters(dim: int, sample_size: int, seed: int) -> tuple[F32, F32, F32]:
    gen = np.random.RandomState(seed=seed)
    rs = gen.gamma(2, 1, (sample_size, dim)).astype(np.float32)
    ln_cs = np.log(gen.gamma(2, 1, (sample_size, dim))).astype(np.float32)
    betas = gen.uniform(0, 1, (sample_size, dim)).astype(np.float32)
    for a in (rs, ln_cs, betas):
        a.setflags(write=False)
    return rs, ln_cs, betas


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class WeightedMinHash:
    """An immutable weighted MinHash: ``sample_size`` samples ``(k, t)``.

    Attributes:
        hashvalues: Read-only ``(sample_size, 2)`` int64 array (datasketch's name).
        seed: The generator's seed.
        dim: The generator's vector dimension.
    """

    hashvalues: I64
    seed: int
    dim: int

    def __post_init__(self) -> None:
        values = np.array(self.hashvalues, dtype=np.int64, copy=True)
        if values.ndim != 2 or values.shape[1] != 2 or not len(values):
            raise InputError(f"hashvalues must be (sample_size, 2), got {values.shape}")
        values.setflags(write=False)
        object.__setattr__(self, "hashvalues", values)

    def __len__(self) -> int:
        return len(self.hashvalues)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WeightedMinHash):
            return NotImplemented
        return (self.seed, self.dim) == (other.seed, other.dim) and np.array_equal(
            self.hashvalues, other.hashvalues
        )

    def __hash__(self) -> int:
        return hash((self.seed, self.dim, self.hashvalues.tobytes()))

    def __repr__(self) -> str:
        return f"WeightedMinHash(sample_size={len(self)}, dim={self.dim}, seed={self.seed})"

    def jaccard(self, other: WeightedMinHash) -> float:
        """Estimated weighted Jaccard in [0, 1]: the fraction of equal samples.

        Raises:
            IncompatibleSketchError: Different seed, dimension or sample size.
        """
        if not isinstance(other, WeightedMinHash) or (self.seed, self.dim, len(self)) != (
            other.seed,
            other.dim,
            len(other),
        ):
            raise IncompatibleSketchError(
                "cannot compare weighted MinHashes of different generators (seed, dim or "
                "sample_size differ); sketch both with one WeightedMinHasher"
            )
        same = np.all(self.hashvalues == other.hashvalues, axis=1)
        return float(np.count_nonzero(same)) / len(self)

    def similarity(self, other: WeightedMinHash) -> float:
        """Same as :meth:`jaccard`."""
        return self.jaccard(other)


class WeightedMinHasher:
    """Sketch non-negative weight vectors with improved consistent weighted sampling.

    Args:
        dim: Length of the vectors.
        sample_size: Number of samples per sketch (datasketch's ``sample_size``).
        seed: Seed of the random parameters (default 1, as datasketch).

    Memory: three ``(sample_size, dim)`` float32 matrices (12 bytes per sample and dimension).

    Examples:
        >>> h = WeightedMinHasher(dim=4, sample_size=256)
        >>> a, b = h.sketch([1, 2, 0, 1]), h.sketch([1, 2, 1, 1])
        >>> abs(a.jaccard(b) - weighted_jaccard([1, 2, 0, 1], [1, 2, 1, 1])) < 0.15
        True
    """

    __slots__ = ("_params", "dim", "sample_size", "seed")

    def __init__(self, dim: int, *, sample_size: int = 128, seed: int = 1) -> None:
        check_range("dim", dim, 1, 1 << 24, integer=True)
        check_range("sample_size", sample_size, 1, 1 << 16, integer=True)
        check_range("seed", seed, 0, (1 << 32) - 1, integer=True)
        if dim * sample_size > 1 << 28:
            raise InputError(
                f"dim * sample_size = {dim * sample_size} needs "
                f"{12 * dim * sample_size >> 20} MB of parameters; lower one of them"
            )
        self.dim = dim
        self.sample_size = sample_size
        self.seed = seed
        self._params = _parameters(dim, sample_size, seed)

    @property
    def parameters(self) -> tuple[F32, F32, F32]:
        """The read-only ``(rs, ln_cs, betas)`` float32 matrices, ``(sample_size, dim)``."""
        return self._params

    def __repr__(self) -> str:
        return (
            f"WeightedMinHasher(dim={self.dim}, sample_size={self.sample_size}, seed={self.seed})"
        )

    def sketch(self, v: npt.ArrayLike) -> WeightedMinHash:
        """Sketch one weight vector (datasketch's ``WeightedMinHashGenerator.minhash``).

        Raises:
            InputError: Wrong length or a negative weight.
            EmptyInputError: Every weight is zero.
        """
        x = np.asarray(v, dtype=np.float32).reshape(-1)
        if len(x) != self.dim:
            raise InputError(f"expected a vector of length {self.dim}, got {len(x)}")
        cols = np.flatnonzero(x)
        if not len(cols):
            raise EmptyInputError("the vector is all zeros; a weighted MinHash needs a weight")
        rows = self._samples(cols, x[cols], np.array([0, len(cols)]), "dense")
        return WeightedMinHash(rows[0], self.seed, self.dim)

    def sketch_many(self, matrix: npt.ArrayLike) -> I64:
        """Sketch the rows of a dense ``(n, dim)`` matrix or a scipy sparse matrix at once:
        ``(n, sample_size, 2)`` int64 samples, ``-1`` for all-zero rows.

        The samples equal datasketch's ``minhash_many`` (its sparse formula).

        Raises:
            InputError: Wrong shape or a negative weight.
        """
        indptr, cidx, data = _csr(matrix, self.dim)
        return self._samples(cidx, data, indptr, "sparse")

    def _samples(self, cidx: I64, data: F32, indptr: I64, form: Literal["dense", "sparse"]) -> I64:
        if len(data) and float(data.min()) < 0:
            raise InputError("weights must be non-negative")
        with np.errstate(divide="ignore"):
            logv = np.log(data.astype(np.float32))
        rs, ln_cs, betas = self._params
        out: I64 = engine.kernels("weighted").icws(
            np.ascontiguousarray(cidx, dtype=np.int64),
            np.ascontiguousarray(logv, dtype=np.float32),
            np.ascontiguousarray(indptr, dtype=np.int64),
            rs,
            ln_cs,
            betas,
            form == "sparse",
        )
        return out


def _csr(matrix: npt.ArrayLike, dim: int) -> tuple[I64, I64, F32]:
    """(indptr, column indices, float32 values) of the nonzero entries, columns sorted."""
    if hasattr(matrix, "tocsr"):
        csr = matrix.tocsr().astype(np.float32)
        if csr.ndim != 2 or csr.shape[1] != dim:
            raise InputError(f"expected a (n, {dim}) matrix, got {csr.shape}")
        csr.sum_duplicates()
        csr.sort_indices()
        csr.eliminate_zeros()
        return (
            np.asarray(csr.indptr, dtype=np.int64),
            np.asarray(csr.indices, dtype=np.int64),
            np.asarray(csr.data, dtype=np.float32),
        )
    x = np.asarray(matrix, dtype=np.float32)
    if x.ndim != 2 or x.shape[1] != dim:
        raise InputError(f"expected a (n, {dim}) matrix, got {x.shape}")
    rows, cols = np.nonzero(x)
    indptr = np.zeros(len(x) + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=len(x)), out=indptr[1:])
    return indptr, cols.astype(np.int64), x[rows, cols]
