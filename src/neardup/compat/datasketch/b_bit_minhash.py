"""datasketch's ``b_bit_minhash`` module: :class:`bBitMinHash` (Li and König, WWW 2010).

Keeps the lowest ``b`` bits of each slot; the estimator corrects for chance agreements.
datasketch 2.0.0's pickle layout (``<qBdi`` header, a scheme code for the affine schemes,
then the slots packed into u64 blocks); packing is vectorized here. See
:class:`neardup.sketch.bbit.BBitMinHash` for the native value.
"""

from __future__ import annotations

import struct

import numpy as np

from neardup.compat.datasketch.minhash import (
    _SCHEME_CODES,
    _SCHEME_CODES_INV,
    _SCHEME_LEGACY,
    _VALID_SCHEMES,
)
from neardup.sketch.bbit import pack_blocks, slot_size, unpack_blocks

__all__ = ["bBitMinHash"]


class bBitMinHash:  # noqa: N801  # datasketch's class name
    """datasketch 2.0.0's ``bBitMinHash``.

    Args:
        minhash: A (lean) MinHash.
        b: Bits kept per slot, 0 to 32.
        r: The ratio of set size to universe size, in [0, 1] (0: the limit for sparse sets).

    Examples:
        >>> from neardup.compat.datasketch.minhash import MinHash
        >>> m = MinHash(num_perm=64); m.update_batch([b"a", b"b"])
        >>> bBitMinHash(m, b=1).jaccard(bBitMinHash(m, b=1))
        1.0
    """

    __slots__ = ("b", "hashvalues", "r", "scheme", "seed")
    _serial_fmt_params = "<qBdi"
    _serial_fmt_block = "Q"

    def __init__(self, minhash: object, b: int = 1, r: float = 0.0) -> None:
        b = int(b)
        r = float(r)
        if b > 32 or b < 0:
            raise ValueError("b must be an integer in [0, 32]")
        if r > 1.0:
            raise ValueError("r must be a float in [0.0, 1.0]")
        bmask = (1 << b) - 1
        self.hashvalues = np.bitwise_and(minhash.hashvalues, bmask).astype(np.uint32)  # type: ignore[attr-defined]
        self.seed = minhash.seed  # type: ignore[attr-defined]
        self.scheme = minhash.scheme  # type: ignore[attr-defined]
        if self.scheme not in _VALID_SCHEMES:
            raise ValueError(
                f"scheme must be one of {', '.join(_VALID_SCHEMES)}, got {self.scheme!r}"
            )
        self.b = b
        self.r = r

    def __eq__(self, other: object) -> bool:
        return (
            type(self) is type(other)
            and self.scheme == other.scheme
            and self.seed == other.seed
            and self.b == other.b
            and self.r == other.r
            and np.array_equal(self.hashvalues, other.hashvalues)
        )

    __hash__ = None  # type: ignore[assignment]

    def jaccard(self, other: bBitMinHash) -> float:
        """Estimated Jaccard similarity, corrected for ``b``-bit chance matches.

        Raises:
            ValueError: Different ``b``, scheme or seed.
        """
        if self.b != other.b:
            raise ValueError("Cannot compare two b-bit MinHashes with different b values")
        if self.scheme != other.scheme:
            raise ValueError(
                "Cannot compare two b-bit MinHashes with different permutation schemes"
            )
        if self.seed != other.seed:
            raise ValueError(
                "Cannot compare two b-bit MinHashes with different set of permutations"
            )
        raw = float(np.count_nonzero(self.hashvalues == other.hashvalues)) / float(
            self.hashvalues.size
        )
        a1 = self._calc_a(self.r, self.b)
        a2 = self._calc_a(other.r, other.b)
        c1, c2 = self._calc_c(a1, a2, self.r, other.r)
        return (raw - c1) / (1 - c2)

    def bytesize(self) -> int:
        """Pickled size in bytes."""
        return self._bytesize()[-1]

    def _params_fmt(self) -> str:
        return (
            self._serial_fmt_params
            if self.scheme == _SCHEME_LEGACY
            else self._serial_fmt_params + "B"
        )

    def __getstate__(self) -> bytearray:
        size, _, num_blocks, total = self._bytesize()
        buf = bytearray(total)
        blocks = pack_blocks(self.hashvalues, size)
        fmt = self._params_fmt() + f"{num_blocks}{self._serial_fmt_block}"
        n = self.hashvalues.size
        if self.scheme == _SCHEME_LEGACY:
            struct.pack_into(fmt, buf, 0, self.seed, self.b, self.r, n, *blocks.tolist())
        else:
            code = _SCHEME_CODES[self.scheme]
            struct.pack_into(fmt, buf, 0, self.seed, self.b, self.r, -n, code, *blocks.tolist())
        return buf

    def __setstate__(self, buf: bytearray) -> None:
        try:
            self.seed, self.b, self.r, num_perm = struct.unpack_from(
                self._serial_fmt_params, buf, 0
            )
        except TypeError:
            buf = memoryview(buf)  # type: ignore[assignment]
            self.seed, self.b, self.r, num_perm = struct.unpack_from(
                self._serial_fmt_params, buf, 0
            )
        offset = struct.calcsize(self._serial_fmt_params)
        if num_perm >= 0:
            self.scheme = _SCHEME_LEGACY
        else:
            num_perm = -num_perm
            (code,) = struct.unpack_from("<B", buf, offset)
            if code not in _SCHEME_CODES_INV:
                raise ValueError(f"Unknown permutation scheme code: {code}")
            self.scheme = _SCHEME_CODES_INV[code]
            offset += 1
        self.hashvalues = np.zeros(num_perm, dtype=np.uint32)
        size, _, num_blocks, _ = self._bytesize()
        blocks = np.array(struct.unpack_from(f"{num_blocks}Q", buf, offset), dtype=np.uint64)
        self.hashvalues = unpack_blocks(blocks, size, num_perm)

    def _calc_a(self, r: float, b: int) -> float:
        if r == 0.0:
            return 1.0 / (1 << b)
        return float(r * (1 - r) ** (2**b - 1) / (1 - (1 - r) ** (2 * b)))

    def _calc_c(self, a1: float, a2: float, r1: float, r2: float) -> tuple[float, float]:
        if r1 == 0.0 and r2 == 0.0:
            return a1, a2
        div = 1 / (r1 + r2)
        return (a1 * r2 + a2 * r1) * div, (a1 * r1 + a2 * r2) * div

    def _find_slot_size(self, b: int) -> int:
        if b in (1, 2):
            return b
        return slot_size(max(b, 4))

    def _bytesize(self) -> tuple[int, int, int, int]:
        block = struct.calcsize(self._serial_fmt_block)
        size = self._find_slot_size(self.b)
        per_block = int(block * 8 / size)
        num_blocks = int(np.ceil(float(self.hashvalues.size) / per_block))
        total = struct.calcsize(self._params_fmt() + f"{num_blocks}{self._serial_fmt_block}")
        return size, per_block, num_blocks, total
