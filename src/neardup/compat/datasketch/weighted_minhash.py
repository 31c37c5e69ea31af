"""datasketch's ``weighted_minhash`` module: WeightedMinHash and WeightedMinHashGenerator.

Built on :class:`neardup.sketch.weighted.WeightedMinHasher` (the same random parameters and
float32 arithmetic as datasketch 2.0.0, run by a native kernel), so the samples are equal.
"""

from __future__ import annotations

import collections.abc
import copy

import numpy as np
import numpy.typing as npt

from neardup.sketch.weighted import WeightedMinHasher

__all__ = ["WeightedMinHash", "WeightedMinHashGenerator"]


class WeightedMinHash:
    """datasketch 2.0.0's ``WeightedMinHash``: ``(sample_size, 2)`` samples ``(k, t)``."""

    def __init__(self, seed: int, hashvalues: npt.NDArray[np.int64]) -> None:
        self.seed = seed
        self.hashvalues = hashvalues

    def jaccard(self, other: WeightedMinHash) -> float:
        """Estimated weighted Jaccard: the fraction of equal samples.

        Raises:
            ValueError: Different seed or sample size.
        """
        if other.seed != self.seed:
            raise ValueError(
                "Cannot compute Jaccard given WeightedMinHash objects with different seeds"
            )
        if len(self) != len(other):
            raise ValueError(
                "Cannot compute Jaccard given WeightedMinHash objects with different numbers "
                "of hash values"
            )
        a = np.asarray(self.hashvalues)
        b = np.asarray(other.hashvalues)
        same = np.all(a.reshape(len(a), -1) == b.reshape(len(b), -1), axis=1)
        return float(np.count_nonzero(same)) / float(len(self))

    def digest(self) -> npt.NDArray[np.int64]:
        """A copy of the samples."""
        return copy.copy(self.hashvalues)

    def copy(self) -> WeightedMinHash:
        """A copy."""
        return WeightedMinHash(self.seed, self.digest())

    def __len__(self) -> int:
        return len(self.hashvalues)

    def __eq__(self, other: object) -> bool:
        return (
            type(self) is type(other)
            and self.seed == other.seed
            and np.array_equal(self.hashvalues, other.hashvalues)
        )

    __hash__ = None  # type: ignore[assignment]


class WeightedMinHashGenerator:
    """datasketch 2.0.0's ``WeightedMinHashGenerator`` (Ioffe 2010).

    Args:
        dim: Vector length.
        sample_size: Samples per sketch.
        seed: Seed of the random parameters.

    Examples:
        >>> g = WeightedMinHashGenerator(3, sample_size=16)
        >>> g.minhash([1.0, 0.0, 2.0]).jaccard(g.minhash([1.0, 0.0, 2.0]))
        1.0
    """

    def __init__(self, dim: int, sample_size: int = 128, seed: int = 1) -> None:
        self.dim = dim
        self.sample_size = sample_size
        self.seed = seed
        self._hasher = WeightedMinHasher(dim, sample_size=sample_size, seed=seed)
        rs, ln_cs, betas = self._hasher.parameters
        self.rs, self.ln_cs, self.betas = rs.copy(), ln_cs.copy(), betas.copy()

    def minhash(self, v: npt.ArrayLike) -> WeightedMinHash:
        """Sketch one vector (the input is not modified).

        Raises:
            TypeError: ``v`` has no length.
            ValueError: Wrong length, or all zeros.
        """
        if not isinstance(v, collections.abc.Sized):
            raise TypeError("Input vector must be sized")
        if len(v) != self.dim:
            raise ValueError(f"Input dimension mismatch, expecting {self.dim}")
        x = np.asarray(v, dtype=np.float32)
        if not x.any():
            raise ValueError("Input is all zeros")
        cols = np.flatnonzero(x)
        rows = self._hasher._samples(cols, x[cols], np.array([0, len(cols)]), "dense")
        return WeightedMinHash(self.seed, rows[0])

    def minhash_many(self, X: npt.ArrayLike) -> list[WeightedMinHash | None]:
        """Sketch every row of a dense or scipy sparse matrix (``None`` for all-zero rows).

        Raises:
            TypeError: Not a numpy array or scipy sparse matrix.
            ValueError: Not two-dimensional, or the wrong width.
        """
        if not (isinstance(X, np.ndarray) or hasattr(X, "tocsr")):
            raise TypeError("Input X must be a sparse matrix or numpy matrix")
        if X.ndim != 2:  # type: ignore[union-attr]
            raise ValueError("Input must have two dimensions")
        if X.shape[1] != self.dim:  # type: ignore[union-attr]
            raise ValueError(f"Input dimension mismatch, expecting {self.dim}")
        samples = self._hasher.sketch_many(X)
        return [
            None if row[0, 0] < 0 else WeightedMinHash(self.seed, row.astype(int))
            for row in samples
        ]
