"""datasketch's ``lean_minhash`` module: :class:`LeanMinHash`, a MinHash without permutations.

datasketch 2.0.0's byte layouts: ``legacy`` is ``q`` seed, ``i`` num_perm, ``num_perm``
``I``; the affine schemes store ``-num_perm`` then a ``B`` scheme code, then ``I`` or ``Q``
values (``serialize`` / ``deserialize`` / pickle).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

import numpy as np

from neardup.compat.datasketch.minhash import (
    _SCHEME_AFFINE32,
    _SCHEME_AFFINE64,
    _SCHEME_CODES,
    _SCHEME_CODES_INV,
    _SCHEME_DTYPES,
    _SCHEME_LEGACY,
    _VALID_SCHEMES,
    MinHash,
)

__all__ = ["LeanMinHash"]

_SCHEME_VALUE_FMTS = {_SCHEME_LEGACY: "I", _SCHEME_AFFINE32: "I", _SCHEME_AFFINE64: "Q"}


class LeanMinHash(MinHash):
    """datasketch 2.0.0's ``LeanMinHash``: seed, scheme and slot values only.

    Examples:
        >>> m = MinHash(num_perm=8); m.update(b"x")
        >>> lean = LeanMinHash(m)
        >>> buf = bytearray(lean.bytesize()); lean.serialize(buf)
        >>> LeanMinHash.deserialize(buf) == lean
        True
    """

    __slots__ = ("hashvalues", "scheme", "seed")

    def _initialize_slots(
        self, seed: int, hashvalues: Iterable[int], scheme: str = _SCHEME_LEGACY
    ) -> None:
        if scheme not in _VALID_SCHEMES:
            raise ValueError(f"scheme must be one of {', '.join(_VALID_SCHEMES)}, got {scheme!r}")
        self.seed = seed
        self.scheme = scheme
        self.hashvalues = self._parse_hashvalues(hashvalues)  # type: ignore[arg-type]
        if scheme != _SCHEME_LEGACY and len(self.hashvalues) == 0:
            raise ValueError("hashvalues must not be empty")

    def __init__(
        self,
        minhash: MinHash | None = None,
        seed: int | None = None,
        hashvalues: Iterable[int] | None = None,
        scheme: str | None = None,
    ):
        if minhash is not None:
            if scheme is not None and scheme != minhash.scheme:
                raise ValueError(
                    f"scheme {scheme!r} conflicts with the scheme {minhash.scheme!r} of the "
                    "given MinHash"
                )
            hv = minhash.hashvalues
            if (
                type(hv) is np.ndarray
                and hv.ndim == 1
                and len(hv)
                and hv.dtype == _SCHEME_DTYPES.get(minhash.scheme)
            ):  # already the scheme's values (as _initialize_slots would make them): copy
                self.seed = minhash.seed
                self.scheme = minhash.scheme
                self.hashvalues = hv.copy()
            else:
                self._initialize_slots(minhash.seed, hv, minhash.scheme)
        elif hashvalues is not None and seed is not None:
            if scheme is None:
                raise ValueError(
                    "scheme must be specified explicitly when initializing from existing hash "
                    "values: pass the scheme of the MinHash they came from, or scheme='legacy' "
                    "for hash values created by datasketch before 2.0.0."
                )
            self._initialize_slots(seed, hashvalues, scheme)
        else:
            raise ValueError(
                "Init parameters cannot be None: make sure to set either minhash or both of "
                "hash values and seed"
            )

    def update(self, b: object) -> None:
        """Not available: raises ``TypeError``."""
        raise TypeError("Cannot update a LeanMinHash")

    def update_batch(self, b: Iterable[object]) -> None:
        """Not available: raises ``TypeError``."""
        raise TypeError("Cannot update a LeanMinHash")

    def copy(self) -> LeanMinHash:
        """A copy."""
        lmh = object.__new__(LeanMinHash)
        lmh._initialize_slots(self.seed, self.hashvalues, self.scheme)
        return lmh

    def _value_fmt(self) -> str:
        return _SCHEME_VALUE_FMTS[self.scheme]

    def bytesize(self, byteorder: str = "@") -> int:
        """Bytes of :meth:`serialize`."""
        if self.scheme == _SCHEME_LEGACY:
            return struct.calcsize(f"{byteorder}qi{len(self)}I")
        return struct.calcsize(f"{byteorder}qiB{len(self)}{self._value_fmt()}")

    def _pack(self, buf: bytearray | memoryview, byteorder: str) -> None:
        if self.scheme == _SCHEME_LEGACY:
            struct.pack_into(
                f"{byteorder}qi{len(self)}I", buf, 0, self.seed, len(self), *self.hashvalues
            )
        else:
            struct.pack_into(
                f"{byteorder}qiB{len(self)}{self._value_fmt()}",
                buf,
                0,
                self.seed,
                -len(self),
                _SCHEME_CODES[self.scheme],
                *self.hashvalues,
            )

    def serialize(self, buf: bytearray | memoryview, byteorder: str = "@") -> None:
        """Write into ``buf`` (at least :meth:`bytesize` bytes)."""
        if len(buf) < self.bytesize(byteorder):
            raise ValueError("The buffer does not have enough space for holding this MinHash.")
        self._pack(buf, byteorder)

    @classmethod
    def _unpack(
        cls, buf: bytes | bytearray | memoryview, byteorder: str
    ) -> tuple[int, tuple[int, ...], str]:
        head = f"{byteorder}qi"
        try:
            seed, num_perm = struct.unpack_from(head, buf, 0)
        except TypeError:
            buf = memoryview(buf)
            seed, num_perm = struct.unpack_from(head, buf, 0)
        if num_perm >= 0:
            scheme = _SCHEME_LEGACY
            offset = struct.calcsize(head)
        else:
            num_perm = -num_perm
            (code,) = struct.unpack_from(byteorder + "B", buf, struct.calcsize(head))
            if code not in _SCHEME_CODES_INV:
                raise ValueError(f"Unknown permutation scheme code: {code}")
            scheme = _SCHEME_CODES_INV[code]
            offset = struct.calcsize(f"{byteorder}qiB0{_SCHEME_VALUE_FMTS[scheme]}")
        values = struct.unpack_from(
            f"{byteorder}{num_perm}{_SCHEME_VALUE_FMTS[scheme]}", buf, offset
        )
        return seed, values, scheme

    @classmethod
    def deserialize(cls, buf: bytes | bytearray | memoryview, byteorder: str = "@") -> LeanMinHash:
        """Read what :meth:`serialize` wrote."""
        seed, values, scheme = cls._unpack(buf, byteorder)
        lmh = object.__new__(LeanMinHash)
        lmh._initialize_slots(seed, values, scheme)
        return lmh

    def __getstate__(self) -> bytearray:  # type: ignore[override]
        buf = bytearray(self.bytesize())
        self._pack(buf, "@")
        return buf

    def __setstate__(self, buf: bytearray) -> None:  # type: ignore[override]
        seed, values, scheme = self._unpack(buf, "@")
        self._initialize_slots(seed, values, scheme)

    def __hash__(self) -> int:  # type: ignore[override]  # lean sketches are hashable
        return hash((self.scheme, self.seed, tuple(self.hashvalues)))

    @classmethod
    def union(cls, *lmhs: LeanMinHash) -> LeanMinHash:  # type: ignore[override]
        """A new LeanMinHash of the union.

        Raises:
            ValueError: Fewer than 2, or different seed, ``num_perm`` or scheme.
        """
        if len(lmhs) < 2:
            raise ValueError("Cannot union less than 2 MinHash")
        num_perm, seed, scheme = len(lmhs[0]), lmhs[0].seed, lmhs[0].scheme
        if any(seed != m.seed or num_perm != len(m) or scheme != m.scheme for m in lmhs):
            raise ValueError(
                "The unioning MinHash must have the same seed, number of permutation functions "
                "and scheme."
            )
        lmh = object.__new__(LeanMinHash)
        lmh._initialize_slots(seed, np.minimum.reduce([m.hashvalues for m in lmhs]), scheme)
        return lmh
