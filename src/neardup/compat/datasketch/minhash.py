"""datasketch's ``minhash`` module: the mutable :class:`MinHash` of datasketch 2.0.0.

Same constructor, methods, schemes (``affine32`` default, ``affine64``, ``legacy``) and
``hashvalues`` as datasketch 2.0.0, including the empty-sketch Jaccard of 1.0. With the
default hash and permutations, ``update`` / ``update_batch`` / ``bulk`` hand the Python list
of ``bytes`` tokens to the ``datasketch`` kernels as it is (SHA-1 and the permutations in one
native call, the tokens read in place); a custom ``hashfunc`` is called per token as
datasketch does.
"""

from __future__ import annotations

import copy
import itertools
import sys
import warnings
from collections.abc import Callable, Generator, Iterable, Sequence
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from neardup._kernels import engine
from neardup.compat.datasketch.hashfunc import sha1_hash32, sha1_hash64
from neardup.errors import InputError
from neardup.sketch import tokensets

__all__ = ["MinHash"]

#: Bytes per hash value (datasketch's ``hashvalue_byte_size``).
hashvalue_byte_size = 8
_mersenne_prime = np.uint64((1 << 61) - 1)
_max_hash = np.uint64((1 << 32) - 1)
_hash_range = 1 << 32

_SCHEME_LEGACY = "legacy"
_SCHEME_AFFINE32 = "affine32"
_SCHEME_AFFINE64 = "affine64"
_VALID_SCHEMES = (_SCHEME_AFFINE32, _SCHEME_AFFINE64, _SCHEME_LEGACY)
_SCHEME_DTYPES: dict[str, type[np.unsignedinteger[npt.NBitBase]]] = {
    _SCHEME_LEGACY: np.uint64,  # type: ignore[dict-item]
    _SCHEME_AFFINE32: np.uint32,  # type: ignore[dict-item]
    _SCHEME_AFFINE64: np.uint64,  # type: ignore[dict-item]
}
_SCHEME_MAX_HASHES = {
    _SCHEME_LEGACY: _max_hash,
    _SCHEME_AFFINE32: np.uint32((1 << 32) - 1),
    _SCHEME_AFFINE64: np.uint64((1 << 64) - 1),
}
_SCHEME_CODES = {_SCHEME_AFFINE32: 1, _SCHEME_AFFINE64: 2}
_SCHEME_CODES_INV = {code: scheme for scheme, code in _SCHEME_CODES.items()}

Hashes = npt.NDArray[np.unsignedinteger]
_DEFAULT_HASHES = (sha1_hash32, sha1_hash64)


def _check_scheme_consistency(known: str | None, minhash: object) -> str | None:
    """datasketch's guard against mixing schemes in one index (returns the scheme to keep)."""
    scheme = getattr(minhash, "scheme", None)
    if scheme is None:
        return known
    if known is None:
        return str(scheme)
    if scheme != known:
        raise ValueError(
            f"MinHash scheme {scheme!r} does not match scheme {known!r} of the MinHash "
            "previously given to this index"
        )
    return known


def _is_default_hash(fn: object, scheme: str) -> bool:
    want = sha1_hash64 if scheme == _SCHEME_AFFINE64 else sha1_hash32
    if fn is want:
        return True
    # datasketch's own functions (when the user imported datasketch) are the same hash
    dh = sys.modules.get("datasketch.hashfunc")
    if dh is None:
        return False
    return fn is getattr(dh, "sha1_hash64" if scheme == _SCHEME_AFFINE64 else "sha1_hash32", None)


class MinHash:
    """datasketch 2.0.0's ``MinHash``: Jaccard similarity of sets (Broder 1997).

    Args:
        num_perm: Number of permutations (ignored when ``hashvalues`` is given).
        seed: Seed of the permutations.
        gpu_mode: Accepted for compatibility; neardup always runs on the CPU (``"always"``
            raises ``RuntimeError`` as datasketch does without a GPU).
        hashfunc: Token hash (default SHA-1, 32 or 64 bits by scheme).
        hashobj: Deprecated no-op.
        hashvalues: Initial slot values (``scheme`` must then be given).
        permutations: Permutation parameters (``scheme`` must then be given).
        scheme: ``"affine32"`` (default), ``"affine64"`` or ``"legacy"``.

    Examples:
        >>> m1, m2 = MinHash(num_perm=64), MinHash(num_perm=64)
        >>> m1.update_batch([b"a", b"b", b"c"]); m2.update_batch([b"a", b"b", b"d"])
        >>> 0.0 < m1.jaccard(m2) < 1.0, MinHash().jaccard(MinHash())
        (True, 1.0)
    """

    _GPU_MODES: ClassVar[tuple[str, ...]] = ("disable", "detect", "always")

    def __init__(
        self,
        num_perm: int = 128,
        seed: int = 1,
        gpu_mode: str = "disable",
        hashfunc: Callable[[bytes], int] | None = None,
        hashobj: object | None = None,
        hashvalues: npt.ArrayLike | None = None,
        permutations: npt.ArrayLike | tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
        scheme: str | None = None,
    ) -> None:
        if scheme is None:
            if hashvalues is not None or permutations is not None:
                raise ValueError(
                    "scheme must be specified explicitly when initializing from existing "
                    "hash values or permutations: pass the scheme of the MinHash they came "
                    "from, or scheme='legacy' for values created by datasketch before 2.0.0."
                )
            scheme = _SCHEME_AFFINE32
        elif scheme not in _VALID_SCHEMES:
            raise ValueError(f"scheme must be one of {', '.join(_VALID_SCHEMES)}, got {scheme!r}")
        self.scheme = scheme
        if hashvalues is not None:
            num_perm = len(hashvalues)  # type: ignore[arg-type]
        if num_perm < 1:
            raise ValueError("num_perm must be positive")
        if num_perm > _hash_range:
            raise ValueError(f"Cannot have more than {_hash_range} number of permutation functions")
        self.seed = seed
        self.num_perm = num_perm
        if hashfunc is None:
            hashfunc = sha1_hash64 if scheme == _SCHEME_AFFINE64 else sha1_hash32
        if not callable(hashfunc):
            raise ValueError("The hashfunc must be a callable.")
        self.hashfunc = hashfunc
        if hashobj is not None:
            warnings.warn(
                "hashobj is deprecated, use hashfunc instead.", DeprecationWarning, stacklevel=2
            )
        if hashvalues is not None:
            self.hashvalues = self._parse_hashvalues(hashvalues)
        else:
            self.hashvalues = self._init_hashvalues(num_perm)
        if permutations is not None:
            self.permutations = self._parse_permutations(permutations)
        else:
            self.permutations = self._init_permutations(num_perm)
        if len(self) != len(self.permutations[0]):
            raise ValueError("Numbers of hash values and permutations mismatch")
        if gpu_mode not in self._GPU_MODES:
            raise ValueError(f"gpu_mode must be one of {self._GPU_MODES}, got {gpu_mode!r}")
        self._gpu_mode = gpu_mode

    # ------------------------------------------------------------------ state

    def _init_hashvalues(self, num_perm: int) -> Hashes:
        return np.full(num_perm, _SCHEME_MAX_HASHES[self.scheme], dtype=_SCHEME_DTYPES[self.scheme])

    def _init_permutations(self, num_perm: int) -> Hashes:
        return tokensets.permutations(num_perm, self.seed, self.scheme)

    def _to_scheme_array(self, values: npt.ArrayLike, what: str) -> Hashes:
        top = int(_SCHEME_MAX_HASHES[self.scheme])  # type: ignore[call-overload]
        if isinstance(values, np.ndarray):
            if (
                values.dtype.kind in "iu"
                and values.size
                and (int(values.max()) > top or int(values.min()) < 0)
            ):
                raise ValueError(f"{what} out of range for scheme {self.scheme!r}")
            return values.astype(_SCHEME_DTYPES[self.scheme])
        try:
            return np.array(values, dtype=_SCHEME_DTYPES[self.scheme])
        except OverflowError as err:
            raise ValueError(f"{what} out of range for scheme {self.scheme!r}: {err}") from err

    def _parse_hashvalues(self, hashvalues: npt.ArrayLike) -> Hashes:
        if self.scheme == _SCHEME_LEGACY:
            return np.array(hashvalues, dtype=np.uint64)
        return self._to_scheme_array(hashvalues, "hash values")

    def _parse_permutations(
        self, permutations: npt.ArrayLike | tuple[npt.ArrayLike, npt.ArrayLike]
    ) -> Hashes:
        if self.scheme == _SCHEME_LEGACY:
            return permutations  # type: ignore[return-value]
        dtype = _SCHEME_DTYPES[self.scheme]
        if (
            isinstance(permutations, np.ndarray)
            and permutations.dtype == dtype
            and permutations.ndim == 2
            and permutations.shape[0] == 2
        ):
            parsed = permutations
        else:
            pa, pb = permutations  # type: ignore[misc,str-unpack]
            a = self._to_scheme_array(pa, "permutation parameters")
            b = self._to_scheme_array(pb, "permutation parameters")
            parsed = np.array([a, b])
        if np.any(parsed[0] & dtype(1) == 0):
            raise ValueError(
                f"all `a` permutation parameters must be odd for scheme {self.scheme!r}"
            )
        return parsed

    def _uses_defaults(self) -> bool:
        """True when the kernels reproduce this sketch's hashing and permutations."""
        perms = self.permutations
        return isinstance(perms, np.ndarray) and perms is tokensets.permutations(
            len(self), self.seed, self.scheme
        )

    # ------------------------------------------------------------------ updates

    def _hash_input_array(self, hvs: Sequence[int]) -> Hashes:
        try:
            return np.array(hvs, dtype=_SCHEME_DTYPES[self.scheme])
        except OverflowError as err:
            raise ValueError(
                f"hashfunc returned a value out of range for scheme {self.scheme!r}: {err}. "
                "Use a hash function matching the scheme width, or scheme='affine64' "
                "for 64-bit hash values."
            ) from err

    def _check_gpu(self) -> None:
        if self._gpu_mode == "always":
            raise RuntimeError("GPU mode 'always' requested but CuPy/CUDA device is unavailable.")

    def update(self, b: object) -> None:
        """Add one value, hashed with ``hashfunc`` (bytes for the default SHA-1 hash)."""
        self.update_batch((b,))

    def update_batch(self, b: Iterable[object]) -> None:
        """Add many values at once (one native call for the default hash)."""
        self._check_gpu()
        items = b if isinstance(b, list | tuple) else list(b)
        if not items:
            return
        scheme = self.scheme
        hv = None
        if _is_default_hash(self.hashfunc, scheme):
            perms = self.permutations
            if perms is tokensets.permutations(len(self), self.seed, scheme):
                try:  # SHA-1 and the permutations of the list as it is, in one call
                    self.hashvalues = engine.kernels("datasketch").update(
                        self.hashvalues, items, perms[0], perms[1], scheme, False
                    )
                    return
                except (InputError, TypeError):
                    pass  # not bytes (hashfunc raises datasketch's error), or odd hashvalues
            try:  # one SHA-1 kernel call when every value is bytes
                hv = tokensets.hash_tokens(items, bits=64 if scheme == _SCHEME_AFFINE64 else 32)  # type: ignore[arg-type]
            except InputError:
                hv = None  # not bytes: hashfunc raises datasketch's own error below
        if hv is None:
            hv = self._hash_input_array([self.hashfunc(x) for x in items]).astype(np.uint64)  # type: ignore[arg-type]
        self._apply(hv)

    def _apply(self, hv: npt.NDArray[np.uint64]) -> None:
        scheme = self.scheme
        if self._uses_defaults():
            row = tokensets.permute(
                hv, np.array([0, len(hv)]), num_perm=len(self), seed=self.seed, scheme=scheme
            )[0]
        elif scheme == _SCHEME_LEGACY:
            a, b = self.permutations
            phv = (hv.reshape(-1, 1) * a + b) % _mersenne_prime
            row = np.bitwise_and(phv, _max_hash).min(axis=0)
        else:
            a, b = self.permutations
            dt = _SCHEME_DTYPES[scheme]
            mixed = tokensets._fmix64(hv) if scheme == _SCHEME_AFFINE64 else _fmix32(hv)
            row = (mixed.astype(dt).reshape(-1, 1) * a + b).min(axis=0)
        self.hashvalues = np.minimum(self.hashvalues, row.astype(self.hashvalues.dtype))

    # ------------------------------------------------------------------ comparisons

    def jaccard(self, other: MinHash) -> float:
        """Estimated Jaccard similarity: the fraction of equal slots (1.0 for two empties).

        Raises:
            ValueError: Different scheme, seed or ``num_perm``.
        """
        if getattr(other, "scheme", None) != self.scheme:
            raise ValueError(
                "Cannot compute Jaccard given MinHash with different permutation schemes"
            )
        if other.seed != self.seed:
            raise ValueError("Cannot compute Jaccard given MinHash with different seeds")
        if len(self) != len(other):
            raise ValueError(
                "Cannot compute Jaccard given MinHash with different numbers of permutation "
                "functions"
            )
        return float(np.count_nonzero(self.hashvalues == other.hashvalues)) / float(len(self))

    def count(self) -> float:
        """Estimated cardinality of the set (``k / sum(v / max) - 1``)."""
        return tokensets.cardinality(self.hashvalues, scheme=self.scheme)

    def merge(self, other: MinHash) -> None:
        """Make this MinHash the union of both.

        Raises:
            ValueError: Different scheme, seed or ``num_perm``.
        """
        if getattr(other, "scheme", None) != self.scheme:
            raise ValueError("Cannot merge MinHash with different permutation schemes")
        if other.seed != self.seed:
            raise ValueError("Cannot merge MinHash with different seeds")
        if len(self) != len(other):
            raise ValueError("Cannot merge MinHash with different numbers of permutation functions")
        self.hashvalues = np.minimum(other.hashvalues, self.hashvalues)

    def digest(self) -> Hashes:
        """A copy of the slot values."""
        return copy.copy(self.hashvalues)

    def is_empty(self) -> bool:
        """True when nothing was added."""
        return not np.any(self.hashvalues != _SCHEME_MAX_HASHES[self.scheme])

    def clear(self) -> None:
        """Reset every slot."""
        self.hashvalues = self._init_hashvalues(len(self))

    def copy(self) -> MinHash:
        """A copy with the same seed, hash function, permutations and scheme."""
        return MinHash(
            seed=self.seed,
            hashfunc=self.hashfunc,
            hashvalues=self.digest(),
            permutations=self.permutations,
            gpu_mode=self._gpu_mode,
            scheme=self.scheme,
        )

    def __len__(self) -> int:
        return len(self.hashvalues)

    def __eq__(self, other: object) -> bool:
        return (
            type(self) is type(other)
            and self.scheme == other.scheme
            and self.seed == other.seed
            and np.array_equal(self.hashvalues, other.hashvalues)
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, unhashable like datasketch's

    @classmethod
    def union(cls, *mhs: MinHash) -> MinHash:
        """A new MinHash of the union of at least two MinHashes.

        Raises:
            ValueError: Fewer than 2, or different seed, ``num_perm`` or scheme.
        """
        if len(mhs) < 2:
            raise ValueError("Cannot union less than 2 MinHash")
        num_perm, seed, scheme = len(mhs[0]), mhs[0].seed, mhs[0].scheme
        if any(seed != m.seed or num_perm != len(m) or scheme != m.scheme for m in mhs):
            raise ValueError(
                "The unioning MinHash must have the same seed, number of permutation functions "
                "and scheme"
            )
        return cls(
            num_perm=num_perm,
            seed=seed,
            hashfunc=mhs[0].hashfunc,
            hashvalues=np.minimum.reduce([m.hashvalues for m in mhs]),
            permutations=mhs[0].permutations,
            gpu_mode=mhs[0]._gpu_mode,
            scheme=scheme,
        )

    @classmethod
    def bulk(cls, b: Iterable[Iterable[object]], **minhash_kwargs: object) -> list[MinHash]:
        """One MinHash per set of values: for default hashing, one kernel call for all."""
        m = cls(**minhash_kwargs)  # type: ignore[arg-type]
        sets = [s if isinstance(s, list | tuple) else list(s) for s in b]
        out = m._sketch_sets(sets)
        return list(cls._each(m, sets)) if out is None else out

    @classmethod
    def generator(
        cls, b: Iterable[Iterable[object]], **minhash_kwargs: object
    ) -> Generator[MinHash, None, None]:
        """Yield one MinHash per set of values.

        With the default hashing the sets are read ahead in chunks of 256 and each chunk is
        sketched in one kernel call, as :meth:`bulk` does.
        """
        m = cls(**minhash_kwargs)  # type: ignore[arg-type]
        if not (m._uses_defaults() and _is_default_hash(m.hashfunc, m.scheme)):
            yield from cls._each(m, b)
            return
        it = iter(b)
        while chunk := [
            s if isinstance(s, list | tuple) else list(s) for s in itertools.islice(it, 256)
        ]:
            out = m._sketch_sets(chunk)
            yield from cls._each(m, chunk) if out is None else out

    @staticmethod
    def _each(m: MinHash, b: Iterable[Iterable[object]]) -> Generator[MinHash, None, None]:
        """A copy of ``m`` updated with each set of values in turn."""
        for values in b:
            new = m.copy()
            new.update_batch(values)
            yield new

    def _sketch_sets(self, sets: list[list[object] | tuple[object, ...]]) -> list[MinHash] | None:
        """Copies of this (empty) MinHash, one per set, sketched in one kernel call; None
        when the hashing is not the default or a value is not bytes (then go one by one)."""
        if not (self._uses_defaults() and _is_default_hash(self.hashfunc, self.scheme)):
            return None
        self._check_gpu()
        try:  # every set in one SHA-1 and one permutation kernel call
            rows = tokensets._sketch_sets(
                sets,  # type: ignore[arg-type]  # non-bytes raise InputError
                len(self),
                self.seed,
                self.scheme,
                "sha1",
                text=False,
            )
        except InputError:
            return None
        if not self.is_empty():
            rows = np.minimum(rows, self.hashvalues)
        cls = type(self)
        copy, new_object = self.__dict__.copy, object.__new__
        out: list[MinHash] = []
        for row in list(rows):  # (each sketch's hashvalues: its row of one array)
            # a new __dict__ set whole: a third of the time of updating the instance's own
            state = copy()
            state["hashvalues"] = row
            new = new_object(cls)
            new.__dict__ = state
            out.append(new)
        return out

    def __getstate__(self) -> dict[str, object]:
        return self.__dict__.copy()

    def __setstate__(self, state: dict[str, object]) -> None:
        state.setdefault("scheme", _SCHEME_LEGACY)
        state.setdefault("_gpu_mode", "disable")
        perms = state.get("permutations")
        if isinstance(perms, np.ndarray) and perms.ndim == 2 and state["scheme"] != "legacy":
            # share the cached parameters again, so unpickled sketches keep the kernel path
            seed = state["seed"]
            assert isinstance(seed, int)
            cached = tokensets.permutations(perms.shape[1], seed, str(state["scheme"]))
            if np.array_equal(cached, perms):
                state["permutations"] = cached
        self.__dict__.update(state)


def _fmix32(h: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    m = np.uint64(0xFFFFFFFF)
    h = h & m
    h ^= h >> np.uint64(16)
    h = (h * np.uint64(0x85EBCA6B)) & m
    h ^= h >> np.uint64(13)
    h = (h * np.uint64(0xC2B2AE35)) & m
    return h ^ (h >> np.uint64(16))
