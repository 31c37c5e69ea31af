"""b-bit MinHash (Li and König, "b-Bit Minwise Hashing", WWW 2010): the BBitMinHash value.

Keeping only the lowest ``b`` bits of each MinHash slot cuts storage by ``64 / b``; two sets
then agree in a slot with probability ``J + (1 - J) * C`` (``C = 2**-b`` for sparse sets),
so ``J ≈ (P - C) / (1 - C)``. Slots pack into u64 words, most significant first, in slots
of 1, 2, 4, 8, 16 or 32 bits (datasketch's ``bBitMinHash`` layout).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError, IncompatibleSketchError
from neardup.sketch.minhash import MinHash

__all__ = ["BBitMinHash", "pack_blocks", "slot_size", "unpack_blocks"]

U64 = npt.NDArray[np.uint64]
U32 = npt.NDArray[np.uint32]


def slot_size(b: int) -> int:
    """Bits of storage per slot for ``b`` kept bits (the next of 1, 2, 4, 8, 16, 32).

    Raises:
        ConfigError: ``b`` outside 0..32.
    """
    for size in (1, 2, 4, 8, 16, 32):
        if b <= size:
            return size
    raise ConfigError(f"b must be at most 32, got {b}")


def pack_blocks(values: npt.ArrayLike, size: int) -> U64:
    """Pack ``size``-bit values into u64 blocks, first value in the most significant bits.

    Examples:
        >>> pack_blocks([1, 0, 1], 1).tolist() == [(1 << 63) | (1 << 61)]
        True
    """
    v = np.asarray(values, dtype=np.uint64)
    per = 64 // size
    n_blocks = -(-len(v) // per)
    padded = np.zeros(n_blocks * per, dtype=np.uint64)
    padded[: len(v)] = v
    shifts = np.uint64(size) * np.arange(per - 1, -1, -1, dtype=np.uint64)
    out: U64 = np.bitwise_or.reduce(padded.reshape(n_blocks, per) << shifts, axis=1)
    return out.astype(np.uint64)


def unpack_blocks(blocks: U64, size: int, n: int) -> U32:
    """Inverse of :func:`pack_blocks`: the first ``n`` values as uint32."""
    per = 64 // size
    shifts = np.uint64(size) * np.arange(per - 1, -1, -1, dtype=np.uint64)
    mask = np.uint64((1 << size) - 1)
    vals = (np.asarray(blocks, dtype=np.uint64)[:, None] >> shifts) & mask
    return vals.reshape(-1)[:n].astype(np.uint32)


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class BBitMinHash:
    """An immutable b-bit MinHash: the lowest ``b`` bits of each slot of a MinHash.

    Attributes:
        blocks: The packed u64 words (read-only).
        b: Bits kept per slot (1 to 32).
        num_perm: Number of slots.
        scheme: The MinHash scheme.
        params: The MinHash params fingerprint.

    Examples:
        >>> from neardup.sketch.minhash import MinHasher
        >>> h = MinHasher(num_perm=256)
        >>> a = BBitMinHash.from_minhash(h.sketch_tokens([str(i) for i in range(100)]), b=2)
        >>> c = BBitMinHash.from_minhash(h.sketch_tokens([str(i) for i in range(50, 150)]), b=2)
        >>> abs(a.jaccard(c) - 1 / 3) < 0.12, a.nbytes
        (True, 64)
    """

    blocks: U64
    b: int
    num_perm: int
    scheme: str
    params: str

    def __post_init__(self) -> None:
        if not 1 <= self.b <= 32:
            raise ConfigError(f"b must be from 1 to 32, got {self.b}")
        blocks = np.array(self.blocks, dtype=np.uint64, copy=True).reshape(-1)
        per = 64 // slot_size(self.b)
        if len(blocks) != -(-self.num_perm // per):
            raise ConfigError(f"{len(blocks)} blocks cannot hold {self.num_perm} slots")
        blocks.setflags(write=False)
        object.__setattr__(self, "blocks", blocks)

    @classmethod
    def from_minhash(cls, mh: MinHash, *, b: int = 1) -> BBitMinHash:
        """Keep the lowest ``b`` bits of each slot of ``mh``."""
        if not 1 <= b <= 32:
            raise ConfigError(f"b must be from 1 to 32, got {b}")
        low = mh.hashvalues & np.uint64((1 << b) - 1)
        return cls(pack_blocks(low, slot_size(b)), b, mh.num_perm, mh.scheme, mh.params)

    @property
    def values(self) -> U32:
        """The kept bits of each slot."""
        return unpack_blocks(self.blocks, slot_size(self.b), self.num_perm)

    @property
    def nbytes(self) -> int:
        """Bytes of the packed slots."""
        return int(self.blocks.nbytes)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BBitMinHash):
            return NotImplemented
        return (self.b, self.num_perm, self.scheme, self.params) == (
            other.b,
            other.num_perm,
            other.scheme,
            other.params,
        ) and np.array_equal(self.blocks, other.blocks)

    def __hash__(self) -> int:
        return hash((self.b, self.scheme, self.params, self.blocks.tobytes()))

    def jaccard(self, other: BBitMinHash) -> float:
        """Estimated Jaccard ``(P - 2**-b) / (1 - 2**-b)`` clipped to [0, 1], where ``P`` is
        the fraction of equal slots (the sparse-set estimator of Li and König).

        Raises:
            IncompatibleSketchError: Different ``b``, ``num_perm``, scheme or params.
        """
        if not isinstance(other, BBitMinHash) or (
            self.b,
            self.num_perm,
            self.scheme,
            self.params,
        ) != (other.b, other.num_perm, other.scheme, other.params):
            raise IncompatibleSketchError(
                "cannot compare b-bit MinHashes of different b, num_perm or MinHasher; "
                "reduce sketches of one MinHasher with the same b"
            )
        p = float(np.count_nonzero(self.values == other.values)) / self.num_perm
        c = 2.0**-self.b
        return min(1.0, max(0.0, (p - c) / (1.0 - c)))

    def similarity(self, other: BBitMinHash) -> float:
        """Same as :meth:`jaccard`."""
        return self.jaccard(other)
