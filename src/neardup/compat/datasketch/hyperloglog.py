"""datasketch's ``hyperloglog`` module: mutable HyperLogLog and HyperLogLogPlusPlus.

The registers, estimators and byte layout of datasketch 2.0.0; estimates come from
:func:`neardup.sketch.hyperloglog.count_registers` and batch updates (``update_batch``, a
neardup addition) from the register kernel; :func:`neardup.sketch.hyperloglog.count_registers`
gives the same estimates for many register rows at once.
"""

from __future__ import annotations

import copy
import struct
import warnings
from collections.abc import Callable, Iterable

import numpy as np
import numpy.typing as npt

from neardup.compat.datasketch.hashfunc import sha1_hash32, sha1_hash64
from neardup.sketch.hyperloglog import HyperLogLog as _NativeHLL
from neardup.sketch.hyperloglog import _tables, hash_tokens

__all__ = ["HyperLogLog", "HyperLogLogPlusPlus"]

I8 = npt.NDArray[np.int8]


class HyperLogLog:
    """datasketch 2.0.0's ``HyperLogLog`` (Flajolet et al. 2007), 32-bit hashes.

    Args:
        p: Precision, 4 to 16 (``2**p`` registers).
        reg: Initial registers (their length sets ``p``).
        hashfunc: Hash of a value to an int (default SHA-1, 32 bits).
        hashobj: Deprecated no-op.

    Examples:
        >>> h = HyperLogLog(p=12)
        >>> h.update_batch([str(i).encode() for i in range(1000)])
        >>> abs(h.count() - 1000) < 50
        True
    """

    __slots__ = ("alpha", "hashfunc", "m", "max_rank", "p", "reg")
    _hash_range_bit = 32
    _hash_range_byte = 4
    _default_hash: Callable[[bytes], int] = staticmethod(sha1_hash32)

    def _get_alpha(self, p: int) -> float:
        if not 4 <= p <= 16:
            raise ValueError(f"p={p} should be in range [4 : 16]")
        if p == 4:
            return 0.673
        if p == 5:
            return 0.697
        if p == 6:
            return 0.709
        return 0.7213 / (1.0 + 1.079 / (1 << p))

    def __init__(
        self,
        p: int = 8,
        reg: I8 | None = None,
        hashfunc: Callable[[bytes], int] | None = None,
        hashobj: object | None = None,
    ) -> None:
        if reg is None:
            self.p = p
            self.m = 1 << p
            self.reg = np.zeros((self.m,), dtype=np.int8)
        else:
            if not isinstance(reg, np.ndarray):
                raise ValueError("The imported register must be a numpy.ndarray.")
            self.m = reg.size
            self.p = self.m.bit_length() - 1
            if 1 << self.p != self.m:
                raise ValueError("The imported register has incorrect size. Expect a power of 2.")
            self.reg = reg
        if hashfunc is None:
            hashfunc = type(self)._default_hash
        if not callable(hashfunc):
            raise ValueError("The hashfunc must be a callable.")
        if hashobj is not None:
            warnings.warn(
                "hashobj is deprecated, use hashfunc instead.", DeprecationWarning, stacklevel=2
            )
        self.hashfunc = hashfunc
        self.alpha = self._get_alpha(self.p)
        self.max_rank = self._hash_range_bit - self.p

    def update(self, b: object) -> None:
        """Add one value.

        Raises:
            ValueError: The hash is wider than the sketch's hash width allows.
        """
        hv = self.hashfunc(b)  # type: ignore[arg-type]
        idx = hv & (self.m - 1)
        rank = self._get_rank(hv >> self.p)
        if rank > self.reg[idx]:
            self.reg[idx] = rank

    def update_batch(self, values: Iterable[object]) -> None:
        """Add many values at once (SHA-1 and the register update in one kernel call each
        for bytes values and the default hash; neardup addition)."""
        items = list(values)
        if self.hashfunc is type(self)._default_hash and all(type(x) is bytes for x in items):
            hashes = hash_tokens(items, bits=self._hash_range_bit)  # type: ignore[arg-type]
        else:
            hashes = np.array([self.hashfunc(x) for x in items], dtype=np.uint64)  # type: ignore[arg-type]
            if len(hashes) and int(hashes.max()) >> self._hash_range_bit:
                raise ValueError(f"Hash value overflow, maximum size is {self.max_rank} bits")
        reg = _NativeHLL.registers_many(
            hashes, np.array([0, len(hashes)]), p=self.p, plus=self._hash_range_bit == 64
        )[0]
        np.maximum(self.reg, reg, out=self.reg)

    def count(self) -> float:
        """Estimated number of distinct values."""
        e = self.alpha * float(self.m**2) / np.sum(2.0 ** (-self.reg))
        threshold = 5.0 / 2.0 * self.m
        if abs(e - threshold) / threshold < 0.15:
            warnings.warn(
                "Warning: estimate is close to error correction threshold. Output may not "
                "satisfy HyperLogLog accuracy guarantee.",
                stacklevel=2,
            )
        if e <= threshold:
            return self._linearcounting(self.m - int(np.count_nonzero(self.reg)))
        if e <= 1.0 / 30.0 * (1 << 32):
            return float(e)
        return self._largerange_correction(e)

    def merge(self, other: HyperLogLog) -> None:
        """Make this sketch the union of both.

        Raises:
            ValueError: Different precisions.
        """
        if self.m != other.m or self.p != other.p:
            raise ValueError("Cannot merge HyperLogLog with different precisions.")
        self.reg = np.maximum(self.reg, other.reg)

    def digest(self) -> I8:
        """A copy of the registers."""
        return copy.copy(self.reg)

    def copy(self) -> HyperLogLog:
        """A copy."""
        return self.__class__(reg=self.digest(), hashfunc=self.hashfunc)

    def is_empty(self) -> bool:
        """True when no value was added."""
        return not np.any(self.reg)

    def clear(self) -> None:
        """Reset the registers."""
        self.reg = np.zeros((self.m,), dtype=np.int8)

    def __len__(self) -> int:
        return len(self.reg)

    def __eq__(self, other: object) -> bool:
        return (
            type(self) is type(other)
            and self.p == other.p
            and self.m == other.m
            and np.array_equal(self.reg, other.reg)
        )

    __hash__ = None  # type: ignore[assignment]

    def _get_rank(self, bits: int) -> int:
        rank = self.max_rank - int(bits).bit_length() + 1
        if rank <= 0:
            raise ValueError(f"Hash value overflow, maximum size is {self.max_rank} bits")
        return rank

    def _linearcounting(self, num_zero: int) -> float:
        return float(self.m * np.log(self.m / float(num_zero)))

    def _largerange_correction(self, e: float) -> float:
        return float(-(1 << 32) * np.log(1.0 - e / (1 << 32)))

    @classmethod
    def union(cls, *hyperloglogs: HyperLogLog) -> HyperLogLog:
        """A new sketch of the union of at least two.

        Raises:
            ValueError: Fewer than 2, or different precisions.
        """
        if len(hyperloglogs) < 2:
            raise ValueError("Cannot union less than 2 HyperLogLog sketches")
        m = hyperloglogs[0].m
        if not all(h.m == m for h in hyperloglogs):
            raise ValueError("Cannot union HyperLogLog sketches with different precisions")
        reg = np.maximum.reduce([h.reg for h in hyperloglogs])
        return cls(reg=reg, hashfunc=hyperloglogs[0].hashfunc)

    def bytesize(self) -> int:
        """Bytes of :meth:`serialize`: one for ``p``, one per register."""
        return 1 + self.m

    def serialize(self, buf: bytearray | memoryview) -> None:
        """Write ``p`` then the registers into ``buf``."""
        if len(buf) < self.bytesize():
            raise ValueError("The buffer does not have enough space for holding this HyperLogLog.")
        struct.pack_into(f"B{self.m}B", buf, 0, self.p, *self.reg.tolist())

    @classmethod
    def deserialize(cls, buf: bytes | bytearray | memoryview) -> HyperLogLog:
        """Read what :meth:`serialize` wrote."""
        view = memoryview(buf)
        p = struct.unpack_from("B", view, 0)[0]
        h = cls(p)
        h.reg = np.array(struct.unpack_from(f"{h.m}B", view, 1), dtype=np.int8)
        return h

    def __getstate__(self) -> bytearray:
        buf = bytearray(self.bytesize())
        self.serialize(buf)
        return buf

    def __setstate__(self, buf: bytearray) -> None:
        view = memoryview(buf)
        p = struct.unpack_from("B", view, 0)[0]
        self.__init__(p=p)  # type: ignore[misc]
        self.reg = np.array(struct.unpack_from(f"{self.m}B", view, 1), dtype=np.int8)


class HyperLogLogPlusPlus(HyperLogLog):
    """datasketch 2.0.0's ``HyperLogLogPlusPlus`` (Heule et al. 2013): 64-bit hashes and the
    empirical bias correction."""

    _hash_range_bit = 64
    _hash_range_byte = 8
    _default_hash = staticmethod(sha1_hash64)

    def _get_threshold(self, p: int) -> int:
        return _tables(p)[2]

    def _estimate_bias(self, e: float, p: int) -> float:
        estimates, bias, _ = _tables(p)
        nearest = np.argsort((e - estimates) ** 2)[:6]
        return float(np.mean(bias[nearest]))

    def count(self) -> float:
        """Estimated number of distinct values (equal to
        :func:`neardup.sketch.hyperloglog.count_registers` with ``plus=True``)."""
        num_zero = self.m - int(np.count_nonzero(self.reg))
        if num_zero > 0:
            lc = self._linearcounting(num_zero)
            if lc <= self._get_threshold(self.p):
                return lc
        e = self.alpha * float(self.m**2) / np.sum(2.0 ** (-self.reg))
        if e <= 5 * self.m:
            return float(e - self._estimate_bias(e, self.p))
        return float(e)
