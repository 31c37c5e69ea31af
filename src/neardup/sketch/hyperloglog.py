"""HyperLogLog and HyperLogLog++ cardinality sketches: the :class:`HyperLogLog` value.

Flajolet, Fusy, Gandouet and Meunier, "HyperLogLog: the analysis of a near-optimal
cardinality estimation algorithm" (AofA 2007); Heule, Nunkesser and Hall, "HyperLogLog in
Practice" (EDBT 2013) for the ``plus`` estimator (64-bit hashes, empirical bias correction,
linear counting below a per-precision threshold). The register layout and both estimators
equal datasketch 2.0.0's ``HyperLogLog`` / ``HyperLogLogPlusPlus``; tokens are hashed with
SHA-1 (``sha1_hash32`` / ``sha1_hash64``) as there, in the native kernels of
:mod:`neardup._kernels.sha1` and :mod:`neardup._kernels.hll`. See ``docs/datasketch.md``.
"""

from __future__ import annotations

import dataclasses
import math
import struct
from collections.abc import Iterable, Sequence
from functools import cache

import numpy as np
import numpy.typing as npt

from neardup._kernels import engine
from neardup.errors import ConfigError, FormatError, IncompatibleSketchError, InputError
from neardup.sketch.tokensets import _hash_packed, pack_token_sets

__all__ = ["FORMAT_VERSION", "HyperLogLog", "count_registers", "hash_tokens"]

#: Version of the headed byte format of :meth:`HyperLogLog.to_bytes`.
FORMAT_VERSION = 1

I8 = npt.NDArray[np.int8]
U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

_MAGIC = b"NDHL"
_HEADER = struct.Struct("<4sHBB")  # magic, version, p, flags (bit 0: plus)


def _alpha(p: int) -> float:
    if p == 4:
        return 0.673
    if p == 5:
        return 0.697
    if p == 6:
        return 0.709
    return 0.7213 / (1.0 + 1.079 / (1 << p))


def _check_p(p: int) -> None:
    if not isinstance(p, int) or isinstance(p, bool) or not 4 <= p <= 16:
        raise ConfigError(f"p (precision) must be an integer from 4 to 16, got {p!r}")


@cache
def _tables(p: int) -> tuple[F64, F64, int]:
    from neardup.sketch import _hll_tables

    return (
        np.array(_hll_tables.RAW_ESTIMATE[p - 4], dtype=np.float64),
        np.array(_hll_tables.BIAS[p - 4], dtype=np.float64),
        _hll_tables.THRESHOLDS[p - 4],
    )


def count_registers(registers: I8, *, plus: bool = False) -> F64:
    """Cardinality estimates of many register rows at once.

    Args:
        registers: ``(n, 2**p)`` (or ``(2**p,)``) int8 registers.
        plus: HyperLogLog++ estimator (64-bit hashes) instead of HyperLogLog's.

    Returns:
        One float64 estimate per row.

    Raises:
        ConfigError: The row length is not a power of two from 16 to 65536.

    Examples:
        >>> count_registers(np.zeros((2, 16), dtype=np.int8)).tolist()
        [0.0, 0.0]
    """
    reg = np.atleast_2d(np.asarray(registers, dtype=np.int8))
    m = reg.shape[1]
    p = m.bit_length() - 1
    if 1 << p != m:
        raise ConfigError(f"register rows must have 2**p entries, got {m}")
    _check_p(p)
    raw = _alpha(p) * float(m * m) / np.sum(2.0 ** (-reg.astype(np.float64)), axis=1)
    zeros = m - np.count_nonzero(reg, axis=1)
    with np.errstate(divide="ignore"):
        linear = m * np.log(m / zeros.astype(np.float64))
    out = np.empty(len(reg), dtype=np.float64)
    if not plus:
        for i in range(len(reg)):
            e = float(raw[i])
            if e <= 2.5 * m:
                out[i] = linear[i]
            elif e <= (1 << 32) / 30.0:
                out[i] = e
            else:
                out[i] = -(1 << 32) * math.log(1.0 - e / (1 << 32))
        return out
    estimates, bias, threshold = _tables(p)
    for i in range(len(reg)):
        if zeros[i] > 0 and linear[i] <= threshold:
            out[i] = linear[i]
            continue
        e = float(raw[i])
        if e <= 5 * m:
            nearest = np.argsort((e - estimates) ** 2)[:6]
            out[i] = e - float(np.mean(bias[nearest]))
        else:
            out[i] = e
    return out


def hash_tokens(tokens: Sequence[bytes], *, bits: int = 32) -> U64:
    """SHA-1 hashes of byte tokens: datasketch's ``sha1_hash32`` (``bits=32``) or
    ``sha1_hash64`` (``bits=64``), in one kernel call.

    Examples:
        >>> int(hash_tokens([b"hello"])[0])
        499578026
    """
    lengths = np.fromiter((len(t) for t in tokens), dtype=np.int64, count=len(tokens))
    ends = np.cumsum(lengths)
    buf = np.frombuffer(b"".join(tokens), dtype=np.uint8)
    kern = engine.kernels("sha1")
    fn = kern.sha1_64 if bits == 64 else kern.sha1_32
    out: U64 = fn(buf, ends - lengths, ends)
    return out


def _as_bytes(tokens: Iterable[bytes | str]) -> list[bytes]:
    out: list[bytes] = []
    for t in tokens:
        if isinstance(t, str):
            out.append(t.encode("utf-8", "surrogatepass"))
        elif isinstance(t, bytes | bytearray | memoryview):
            out.append(bytes(t))
        else:
            raise InputError(f"tokens must be str or bytes, got {type(t).__name__}")
    return out


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class HyperLogLog:
    """An immutable HyperLogLog (or HyperLogLog++) sketch: ``2**p`` int8 registers.

    Attributes:
        registers: Read-only int8 array of ``2**p`` registers (datasketch's ``reg``).
        plus: True for HyperLogLog++ (64-bit hashes, bias-corrected estimate).

    Relative standard error about ``1.04 / sqrt(2**p)`` (6.5 % at ``p=8``, 1.6 % at 12).

    Examples:
        >>> h = HyperLogLog.from_tokens([str(i) for i in range(1000)], p=12)
        >>> abs(h.count() - 1000) < 50
        True
        >>> HyperLogLog.from_bytes(h.to_bytes()) == h
        True
    """

    registers: I8
    plus: bool = False

    def __post_init__(self) -> None:
        reg = np.array(self.registers, dtype=np.int8, copy=True).reshape(-1)
        p = len(reg).bit_length() - 1
        if 1 << p != len(reg):
            raise ConfigError(f"a HyperLogLog needs 2**p registers, got {len(reg)}")
        _check_p(p)
        if len(reg) and (reg.min() < 0 or reg.max() > self.bits - p + 1):
            raise ConfigError(
                f"register values must lie in [0, {self.bits - p + 1}] for p={p}; "
                "the registers are corrupt"
            )
        reg.setflags(write=False)
        object.__setattr__(self, "registers", reg)

    @property
    def p(self) -> int:
        """The precision: ``log2`` of the number of registers."""
        return len(self.registers).bit_length() - 1

    @property
    def bits(self) -> int:
        """Hash width: 32 (HyperLogLog) or 64 (HyperLogLog++)."""
        return 64 if self.plus else 32

    @property
    def is_empty(self) -> bool:
        """True when no value was added (every register is zero)."""
        return not bool(np.any(self.registers))

    def __len__(self) -> int:
        return len(self.registers)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HyperLogLog):
            return NotImplemented
        return self.plus == other.plus and np.array_equal(self.registers, other.registers)

    def __hash__(self) -> int:
        return hash((self.plus, self.registers.tobytes()))

    def __repr__(self) -> str:
        kind = "HyperLogLog++" if self.plus else "HyperLogLog"
        return f"HyperLogLog(p={self.p}, {kind})"

    @classmethod
    def empty(cls, p: int = 8, *, plus: bool = False) -> HyperLogLog:
        """The sketch of the empty set."""
        _check_p(p)
        return cls(np.zeros(1 << p, dtype=np.int8), plus)

    @classmethod
    def from_hashes(cls, hashes: U64, *, p: int = 8, plus: bool = False) -> HyperLogLog:
        """Sketch of already hashed values (32-bit hashes, or 64-bit with ``plus``).

        Raises:
            InputError: A hash wider than the sketch's hash width.
        """
        return cls(cls.registers_many(hashes, np.array([0, len(hashes)]), p=p, plus=plus)[0], plus)

    @staticmethod
    def registers_many(hashes: U64, doc_offsets: I64, *, p: int = 8, plus: bool = False) -> I8:
        """Registers of many sketches at once (the batch path): ``(n, 2**p)`` int8.

        Args:
            hashes: Every document's hashes, concatenated.
            doc_offsets: ``n + 1`` offsets: document ``d`` owns ``hashes[o[d]:o[d+1]]``.
            p: Precision.
            plus: 64-bit hashes (HyperLogLog++).

        Raises:
            InputError: A hash wider than 32 bits without ``plus``.
        """
        _check_p(p)
        h = np.ascontiguousarray(hashes, dtype=np.uint64)
        if not plus and len(h) and int(h.max()) >> 32:
            raise InputError(
                "a HyperLogLog takes 32-bit hashes; this one is wider (use plus=True for "
                "64-bit hashes)"
            )
        offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
        out: I8 = engine.kernels("hll").registers(h, offsets, p, 64 if plus else 32)
        return out

    @classmethod
    def from_tokens(
        cls, tokens: Iterable[bytes | str], *, p: int = 8, plus: bool = False
    ) -> HyperLogLog:
        """Sketch of a set of tokens (``str`` is UTF-8 encoded), hashed with SHA-1 as
        datasketch does: the registers equal datasketch's after ``update`` of each token."""
        items = _as_bytes(tokens)
        return cls.from_hashes(hash_tokens(items, bits=64 if plus else 32), p=p, plus=plus)

    @classmethod
    def sketch_many(
        cls, token_sets: Sequence[Iterable[bytes | str]], *, p: int = 8, plus: bool = False
    ) -> I8:
        """Registers of many token sets in one pass: ``(n, 2**p)`` int8 (see
        :func:`count_registers` for their estimates).

        Examples:
            >>> regs = HyperLogLog.sketch_many([["a", "b"], ["c"]], p=4)
            >>> regs.shape, count_registers(regs).round(1).tolist()
            ((2, 16), [2.1, 1.0])
        """
        sets = [t if isinstance(t, list | tuple) else list(t) for t in token_sets]
        try:
            raw, lengths, offsets = pack_token_sets(sets)
        except InputError:  # str tokens: encode them first
            raw, lengths, offsets = pack_token_sets([_as_bytes(t) for t in sets])
        hashes = _hash_packed(raw, lengths, "affine64" if plus else "", "sha1")
        return cls.registers_many(hashes, offsets, p=p, plus=plus)

    def count(self) -> float:
        """Estimated number of distinct values."""
        return float(count_registers(self.registers, plus=self.plus)[0])

    def _check(self, other: HyperLogLog) -> None:
        if not isinstance(other, HyperLogLog):
            raise IncompatibleSketchError(
                f"cannot merge a HyperLogLog with a {type(other).__name__}; pass a HyperLogLog"
            )
        if (self.p, self.plus) != (other.p, other.plus):
            raise IncompatibleSketchError(
                f"cannot merge HyperLogLog sketches of different precisions or kinds "
                f"(p={self.p}/plus={self.plus} vs p={other.p}/plus={other.plus}); sketch both "
                "with the same p"
            )

    def merge(self, *others: HyperLogLog) -> HyperLogLog:
        """The sketch of the union (elementwise register maximum).

        Raises:
            IncompatibleSketchError: Different precision or kind.

        Examples:
            >>> a = HyperLogLog.from_tokens(["x", "y"], p=4)
            >>> a.merge(HyperLogLog.from_tokens(["z"], p=4)) == HyperLogLog.from_tokens(
            ...     ["x", "y", "z"], p=4)
            True
        """
        reg = self.registers
        for other in others:
            self._check(other)
            reg = np.maximum(reg, other.registers)
        return HyperLogLog(reg, self.plus)

    def to_bytes(self) -> bytes:
        """Serialize: ``b"NDHL"``, u16 format version, u8 p, u8 flags (1 = plus), then the
        registers, one byte each."""
        head = _HEADER.pack(_MAGIC, FORMAT_VERSION, self.p, int(self.plus))
        return head + self.registers.astype(np.uint8).tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> HyperLogLog:
        """Inverse of :meth:`to_bytes`.

        Raises:
            FormatError: Bad magic, unknown version or flags, wrong length.
        """
        data = bytes(data)
        if len(data) < _HEADER.size or data[:4] != _MAGIC:
            raise FormatError("bytes are not a HyperLogLog: expected the b'NDHL' header")
        _, version, p, flags = _HEADER.unpack_from(data)
        if version != FORMAT_VERSION:
            raise FormatError(
                f"HyperLogLog format version {version} is not supported (this neardup reads "
                f"version {FORMAT_VERSION}); upgrade neardup"
            )
        if flags > 1 or not 4 <= p <= 16 or len(data) != _HEADER.size + (1 << p):
            raise FormatError(
                f"HyperLogLog bytes are corrupt (p={p}, flags={flags}, {len(data)} bytes)"
            )
        reg = np.frombuffer(data, dtype=np.uint8, offset=_HEADER.size).astype(np.int8)
        try:
            return cls(reg, bool(flags))
        except ConfigError as exc:
            raise FormatError(str(exc)) from None
