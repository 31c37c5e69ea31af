"""Exact Hamming-radius index for 64/128/256-bit codes (SimHash, image hashes).

Pigeonhole search (Manku, Jain and Das Sarma 2007, "Detecting near-duplicates for web
crawling"; Norouzi, Punjani and Fleet 2012, "Fast search in Hamming space with multi-index
hashing"): the code is split into ``blocks > radius`` contiguous blocks, so two codes within
``radius`` agree exactly on at least one block. Each block chains the rows per block value
(``HammingTable`` of the compiled core); candidates are verified by popcount, and all pairs come
from sorting the rows by each block. The index holds every code in memory (``bits // 8`` bytes
each, plus one chain link per block and row).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Hashable, Iterable, Iterator, Sequence
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from neardup._kernels import engine
from neardup._kernels.text import FNV64_PRIME
from neardup.errors import ConfigError, FormatError, IncompatibleSketchError, InputError
from neardup.sketch.simhash import SimHash

__all__ = ["Code", "HammingIndex", "hamming_block_keys"]

#: A code: an ``int``, a :class:`SimHash`, or a uint64 numpy row / scalar (least significant
#: word first).
Code: TypeAlias = int | SimHash | np.integer | npt.NDArray[np.uint64]

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
_MASK64 = (1 << 64) - 1
_MAGIC = b"NDHI"
_VERSION = 1
_HEADER = struct.Struct("<4sBBHHHQH")
_MIN_DELTA = 512  # compaction: dead rows kept up to max(this, half the rows)


def _block_bounds(bits: int, blocks: int) -> list[tuple[int, int]]:
    base, extra = divmod(bits, blocks)
    bounds, start = [], 0
    for j in range(blocks):
        width = base + (1 if j < extra else 0)
        bounds.append((start, start + width))
        start += width
    return bounds


class HammingIndex:
    """Exact search of codes within a Hamming radius.

    Args:
        bits: Code width: 64, 128 or 256.
        radius: Default search radius for :meth:`query` and the radius of :meth:`pairs`.
        blocks: Number of blocks (default ``max(radius + 1, bits // 64)``); must exceed every
            radius searched through the tables. More blocks mean longer tables, fewer
            candidates.

    Keys are any hashable; adding an existing key replaces its code (and moves it to the end
    of the insertion order). Results are exact: nothing within the radius is missed.

    Examples:
        >>> idx = HammingIndex(64, radius=3)
        >>> idx.add("a", 0b1111)
        >>> idx.add_many(["b", "c"], [0b0111, 0xFF00])
        >>> idx.query(0b1111)
        [('a', 0), ('b', 1)]
        >>> list(idx.pairs())
        [('a', 'b', 1)]
    """

    def __init__(self, bits: int = 64, radius: int = 3, *, blocks: int | None = None) -> None:
        if bits not in (64, 128, 256):
            raise ConfigError(f"bits must be 64, 128 or 256, got {bits!r}")
        if isinstance(radius, bool) or not isinstance(radius, int) or not 0 <= radius < bits:
            raise ConfigError(f"radius must be an integer from 0 to {bits - 1}, got {radius!r}")
        nblocks = max(radius + 1, bits // 64) if blocks is None else blocks
        if isinstance(nblocks, bool) or not isinstance(nblocks, int):
            raise ConfigError(f"blocks must be an integer, got {nblocks!r}")
        if not max(radius + 1, bits // 64) <= nblocks <= bits:
            raise ConfigError(
                f"blocks must be from {max(radius + 1, bits // 64)} to {bits} for bits={bits} "
                f"and radius={radius} (more blocks than the radius, at most 64 bits each)"
            )
        self._bits = bits
        self._words = bits // 64
        self._radius = radius
        self._bounds = _block_bounds(bits, nblocks)
        self._masks = np.zeros((nblocks, self._words), dtype=np.uint64)
        for j, (s, e) in enumerate(self._bounds):
            for b in range(s, e):
                self._masks[j, b // 64] |= np.uint64(1 << (b % 64))
        self._starts = np.array([s for s, _ in self._bounds], dtype=np.int64)
        self._ends = np.array([e for _, e in self._bounds], dtype=np.int64)
        self._params = ""
        self._clear()

    def _clear(self) -> None:
        # the rows live in a HammingTable (the compiled one, or its Python twin): codes and
        # live flags in insertion order, filed into per-block chains at the next query
        self._table = engine.kernels("hamming").HammingTable(self._words, self._starts, self._ends)
        self._keys: list[Hashable] = []
        self._rows: dict[Hashable, int] = {}

    def __getstate__(self) -> dict[str, object]:
        state = {k: v for k, v in self.__dict__.items() if k != "_table"}
        state["_codes"] = self._table.codes()
        state["_alive"] = self._table.alive()
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        state = dict(state)
        if "_codes_buf" in state:  # a pickle of the numba version: row buffers and a table
            n = len(state["_keys"])  # type: ignore[arg-type]
            state["_codes"] = state["_codes_buf"][:n]  # type: ignore[index]
            state["_alive"] = state["_alive_buf"][:n]  # type: ignore[index]
        codes, alive = state.pop("_codes"), state.pop("_alive")
        keep = ("_bits", "_words", "_radius", "_bounds", "_masks", "_starts", "_ends", "_params")
        self.__dict__.update({k: state[k] for k in keep})
        self._clear()
        self._keys = list(state["_keys"])  # type: ignore[call-overload]
        self._rows = dict(state["_rows"])  # type: ignore[call-overload]
        self._table.add_rows(
            np.ascontiguousarray(codes, dtype=np.uint64), np.ascontiguousarray(alive, dtype=bool)
        )

    @property
    def _codes(self) -> U64:
        """A copy of every row's code (live or not), in insertion order."""
        codes: U64 = self._table.codes()
        return codes

    @property
    def _alive(self) -> npt.NDArray[np.bool_]:
        """A copy of every row's live flag."""
        alive: npt.NDArray[np.bool_] = self._table.alive()
        return alive

    @property
    def bits(self) -> int:
        """The code width."""
        return self._bits

    @property
    def radius(self) -> int:
        """The default radius."""
        return self._radius

    @property
    def blocks(self) -> int:
        """The number of blocks (radii up to ``blocks - 1`` use the tables)."""
        return len(self._bounds)

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, key: object) -> bool:
        return key in self._rows

    def __repr__(self) -> str:
        return f"HammingIndex(bits={self._bits}, radius={self._radius}, blocks={self.blocks})"

    # -- codes -----------------------------------------------------------------------------

    def _check_params(self, params: str) -> None:
        if not params:
            return
        if self._params and params != self._params:
            raise IncompatibleSketchError(
                f"index holds SimHash codes made with {self._params}, not {params}; "
                "hash everything with the same SimHasher"
            )
        self._params = params

    def _row(self, code: Code) -> U64:
        """One code as ``(words,)`` uint64."""
        if isinstance(code, SimHash):
            if code.bits != self._bits:
                raise IncompatibleSketchError(
                    f"a {code.bits}-bit SimHash cannot go in a {self._bits}-bit index; "
                    "use a HammingIndex of the same width"
                )
            self._check_params(code.params)
            return code.words()
        if isinstance(code, np.ndarray):
            if code.size != self._words:
                raise InputError(
                    f"expected one code ({self._words} uint64 words), got an array of shape "
                    f"{code.shape}"
                )
            rows = self._rows_of(code.reshape(1, -1))
            row: U64 = rows[0]
            return row
        if isinstance(code, np.integer):
            code = int(code)
        if isinstance(code, bool) or not isinstance(code, int):
            raise InputError(
                f"a code must be an int, a SimHash or a uint64 array, not {type(code).__name__}"
            )
        if not 0 <= code < (1 << self._bits):
            raise InputError(
                f"code {code:#x} does not fit in {self._bits} bits; "
                f"pass 0 <= code < 2**{self._bits} (or use an index of the right width)"
            )
        return np.array([(code >> (64 * k)) & _MASK64 for k in range(self._words)], np.uint64)

    def _rows_of(self, codes: npt.NDArray[np.generic]) -> U64:
        if codes.dtype.kind not in "ui":
            raise InputError(f"codes must be an unsigned integer array, got dtype {codes.dtype}")
        if codes.ndim == 1 and self._words == 1:
            codes = codes.reshape(-1, 1)
        if codes.ndim != 2 or codes.shape[1] != self._words:
            raise InputError(
                f"codes of shape {codes.shape} do not fit a {self._bits}-bit index; pass shape "
                f"(n, {self._words})" + (" or (n,)" if self._words == 1 else "")
            )
        if codes.dtype.kind == "i" and len(codes) and codes.min() < 0:
            raise InputError("codes must not be negative; pass them as a uint64 array")
        return np.ascontiguousarray(codes, dtype=np.uint64)

    # -- updates ---------------------------------------------------------------------------

    def add(self, key: Hashable, code: Code) -> None:
        """Add (or replace) ``key`` with ``code``.

        Raises:
            InputError: The code is not of this index's width.
            IncompatibleSketchError: A SimHash of another width or other params.
        """
        if (
            type(code) is int
            and self._words == 1
            and 0 <= code <= _MASK64
            and key not in self._rows
        ):
            self._rows[key] = self._table.add_code(code)
            self._keys.append(key)
            return
        self._append([key], self._row(code).reshape(1, -1))

    def add_many(
        self, keys: Sequence[Hashable], codes: Iterable[Code] | npt.NDArray[np.generic]
    ) -> None:
        """Add many codes: a uint64 array (``(n,)`` for 64 bits, ``(n, bits // 64)``), or ints.

        Raises:
            InputError: Lengths differ, or a code does not fit this index's width.
        """
        if isinstance(codes, np.ndarray):
            rows = self._rows_of(codes)
        else:
            items = list(codes)
            rows = np.zeros((len(items), self._words), dtype=np.uint64)
            for i, c in enumerate(items):
                rows[i] = self._row(c)
        keys = list(keys)
        if len(keys) != len(rows):
            raise InputError(f"{len(keys)} keys but {len(rows)} codes; pass one code per key")
        self._append(keys, rows)

    def _append(self, keys: list[Hashable], rows: U64) -> None:
        start = len(self._keys)
        alive = np.ones(len(keys), dtype=bool)
        if not self._rows:  # no live key to replace: one dict, repeats found by its length
            self._rows = dict(zip(keys, range(start, start + len(keys)), strict=True))
            if len(self._rows) < len(keys):  # a repeated key: its last row wins
                last = self._rows
                alive[:] = [last[key] == start + i for i, key in enumerate(keys)]
            fresh = True
        else:
            fresh = self._rows.keys().isdisjoint(keys) and len(set(keys)) == len(keys)
            if fresh:  # the common case, without a Python-level loop
                self._rows.update(zip(keys, range(start, start + len(keys)), strict=True))
        for i, key in enumerate([] if fresh else keys):
            old = self._rows.get(key)
            if old is not None:
                if old >= start:
                    alive[old - start] = False
                else:
                    self._table.kill(old)
            self._rows[key] = start + i
        self._table.add_rows(rows, alive)
        self._keys.extend(keys)
        self._maintain()

    def remove(self, key: Hashable) -> None:
        """Remove ``key``.

        Raises:
            InputError: ``key`` is not in the index.
        """
        row = self._rows.pop(key, None)
        if row is None:
            raise InputError(f"key {key!r} is not in the index; check `key in index` first")
        self._table.kill(row)
        self._maintain()

    def _maintain(self) -> None:
        n = len(self._keys)
        dead = n - len(self._rows)
        if dead > max(_MIN_DELTA, n // 2):
            live = np.flatnonzero(self._alive)
            codes = self._codes[live]
            keys = [self._keys[i] for i in live.tolist()]
            self._clear()
            self._append(keys, codes)

    # -- search ----------------------------------------------------------------------------

    def _check_radius(self, radius: int | None) -> int:
        r = self._radius if radius is None else radius
        if isinstance(r, bool) or not isinstance(r, int) or not 0 <= r <= self._bits:
            raise ConfigError(f"radius must be an integer from 0 to {self._bits}, got {r!r}")
        return r

    def query(self, code: Code, radius: int | None = None) -> list[tuple[Hashable, int]]:
        """Every key whose code is within ``radius`` of ``code``, with its distance.

        Radii up to ``blocks - 1`` use the block tables; larger ones scan every code (still
        exact, linear time).

        Returns:
            ``(key, distance)`` sorted by distance, then insertion order.

        Raises:
            ConfigError: ``radius`` is negative or above ``bits``.
            InputError: The code does not fit this index's width.
        """
        r = self._radius if radius is None else self._check_radius(radius)
        if type(code) is int and self._words == 1 and 0 <= code <= _MASK64:
            hits: list[tuple[Hashable, int]] = self._table.query_keys(code, r, self._keys)
            return hits
        rows, dist = self._table.query(self._row(code), r)
        keys = self._keys
        return [(keys[i], d) for i, d in zip(rows.tolist(), dist.tolist(), strict=True)]

    def pair_rows(self, radius: int | None = None) -> tuple[I64, I64, I64]:
        """All pairs within ``radius`` as arrays ``(a, b, d)`` of positions in :meth:`keys`.

        ``a < b``, each pair once, sorted by ``(a, b)``. The batch form of :meth:`pairs`.

        Raises:
            ConfigError: ``radius`` is not below ``blocks``.
        """
        r = self._check_radius(radius)
        if r >= self.blocks:
            raise ConfigError(
                f"pairs() needs radius < blocks ({self.blocks}); build the index with "
                f"blocks={r + 1} or more"
            )
        codes = self._codes if len(self._rows) == len(self._keys) else self._codes[self._alive]
        kern = engine.kernels("hamming")
        a, b, d = kern.all_pairs(codes, self._starts, self._ends, self._masks, r)
        srt = np.lexsort((b, a))
        # positions among live rows == positions in keys()
        return a[srt], b[srt], d[srt]

    def keys(self) -> list[Hashable]:
        """The keys in insertion order."""
        if len(self._rows) == len(self._keys):
            return list(self._keys)
        return [self._keys[i] for i in np.flatnonzero(self._alive).tolist()]

    def pairs(self, radius: int | None = None) -> Iterator[tuple[Hashable, Hashable, int]]:
        """Every pair of keys within ``radius`` (default: the index radius), each once.

        Yields ``(key_a, key_b, distance)`` with ``key_a`` inserted before ``key_b``, ordered
        by ``key_a``'s then ``key_b``'s insertion. The kernel sorts the codes by each
        block, scans runs of equal block values, verifies by popcount and reports a pair only
        from the first block it agrees on.
        """
        a, b, d = self.pair_rows(radius)
        keys = self.keys() if len(a) else []
        for i, j, x in zip(a.tolist(), b.tolist(), d.tolist(), strict=True):
            yield keys[i], keys[j], x

    # -- persistence -----------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """Serialize: header, params, keys (JSON), codes (little-endian u64 words).

        Layout: ``b"NDHI"``, u8 version, u8 0, u16 bits, u16 radius, u16 blocks, u64 count,
        u16 len(params) (little-endian); ASCII params; u64 len(keys JSON); UTF-8 JSON array
        of the keys; ``count * bits // 8`` bytes of codes.

        Raises:
            InputError: A key is not a str or int (only those can be saved).
        """
        keys = self.keys()
        if not all(isinstance(k, str | int) and not isinstance(k, bool) for k in keys):
            raise InputError("only str and int keys can be saved; map other keys to str first")
        codes = self._codes[self._alive].astype("<u8")
        params = self._params.encode("ascii")
        blob = json.dumps(keys, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        head = _HEADER.pack(
            _MAGIC, _VERSION, 0, self._bits, self._radius, self.blocks, len(keys), len(params)
        )
        return head + params + struct.pack("<Q", len(blob)) + blob + codes.tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> HammingIndex:
        """Read :meth:`to_bytes` output.

        Raises:
            FormatError: Malformed or truncated data, or an unknown version.
        """
        if not isinstance(data, bytes | bytearray | memoryview):
            raise FormatError(f"HammingIndex.from_bytes needs bytes, got {type(data).__name__}")
        data = bytes(data)
        if len(data) < _HEADER.size or data[:4] != _MAGIC:
            raise FormatError(
                "not a saved HammingIndex (no b'NDHI' header); pass to_bytes() output"
            )
        _, version, reserved, bits, radius, blocks, count, plen = _HEADER.unpack_from(data)
        if version != _VERSION or reserved:
            raise FormatError(f"HammingIndex format {version} is not supported; upgrade neardup")
        pos = _HEADER.size
        try:
            params = data[pos : pos + plen].decode("ascii")
            pos += plen
            (klen,) = struct.unpack_from("<Q", data, pos)
            pos += 8
            keys = json.loads(data[pos : pos + klen].decode("utf-8"))
        except (UnicodeDecodeError, struct.error, ValueError, RecursionError):
            raise FormatError("saved HammingIndex is truncated or corrupt") from None
        pos += klen
        words = bits // 64 if bits in (64, 128, 256) else 0
        if (
            not words
            or not isinstance(keys, list)
            or len(keys) != count
            or not all(isinstance(k, str | int) and not isinstance(k, bool) for k in keys)
            or len(data) != pos + count * words * 8
        ):
            raise FormatError("saved HammingIndex is truncated or corrupt")
        try:
            index = cls(bits, radius, blocks=blocks)
        except ConfigError as exc:
            raise FormatError(f"saved HammingIndex has bad parameters: {exc}") from None
        codes = np.frombuffer(data, dtype="<u8", offset=pos).astype(np.uint64)
        index._params = params
        index.add_many(keys, codes.reshape(count, words))
        return index


def hamming_block_keys(codes: U64, bits: int, radius: int) -> U64:
    """``(n, radius + 1)`` keys: block ``k`` of each code (contiguous bits; the first
    ``bits % (radius + 1)`` blocks one bit longer) in the low bits, ``k`` in the top 8 bits
    (blocks of 56 bits or more are hashed down first). Two codes within ``radius`` bits agree
    on at least one block (pigeonhole), so they share a key.

    Examples:
        >>> hamming_block_keys(np.array([0, 1], np.uint64), 64, 3)[:, 1].tolist()
        [72057594037927936, 72057594037927936]
    """
    m = radius + 1
    words = np.asarray(codes, dtype=np.uint64).reshape(len(codes), -1)
    sizes = [bits // m + (1 if k < bits % m else 0) for k in range(m)]
    out = np.empty((len(words), m), dtype=np.uint64)
    start = 0
    for k, size in enumerate(sizes):
        value = np.zeros(len(words), dtype=np.uint64)
        for b in range(size):  # bit-by-bit: simple, and blocks may straddle 64-bit words
            pos = start + b
            bit = (words[:, pos // 64] >> np.uint64(pos % 64)) & np.uint64(1)
            if size <= 56:
                value |= bit << np.uint64(b)
            else:
                value = (value * np.uint64(FNV64_PRIME)) ^ bit
        out[:, k] = (value & np.uint64((1 << 56) - 1)) | (np.uint64(k) << np.uint64(56))
        start += size
    return out
