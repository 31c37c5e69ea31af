"""Exact Hamming-radius index for 64/128/256-bit codes (SimHash, image hashes).

Pigeonhole search (Manku, Jain and Das Sarma 2007, "Detecting near-duplicates for web
crawling"; Norouzi, Punjani and Fleet 2012, "Fast search in Hamming space with multi-index
hashing"): the code is split into ``blocks > radius`` contiguous blocks, so two codes within
``radius`` agree exactly on at least one block. Each block has a sorted numpy table searched
with ``searchsorted``; candidates are verified by popcount. The index holds every code in
memory (``bits // 8`` bytes each, plus one sorted copy of the block values per block).
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
from neardup.index._growth import grow_array, grow_table
from neardup.sketch.simhash import SimHash

__all__ = ["Code", "HammingIndex", "hamming_block_keys"]

#: A code: an ``int``, a :class:`SimHash`, or a uint64 numpy row / scalar (least significant
#: word first).
Code: TypeAlias = int | SimHash | np.integer | npt.NDArray[np.uint64]

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
_MASK64 = (1 << 64) - 1
_SIGN = 1 << 63  # 64-bit codes reach the kernels as their int64 bit pattern
_WRAP = 1 << 64
_MAGIC = b"NDHI"
_VERSION = 1
_HEADER = struct.Struct("<4sBBHHHQH")
_MIN_DELTA = 512


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
        # rows live in capacity-doubling buffers (the first _m rows are filed); every filed
        # row's block keys are in one hash table, itself one int64 array (layout in
        # neardup._kernels.lsh, the block bounds in its header), so a query of the table is
        # one short numba call.
        self._codes_buf = np.zeros((0, self._words), dtype=np.uint64)
        self._alive_buf = np.zeros(0, dtype=bool)
        self._mark = np.zeros(0, dtype=np.int64)
        self._keys: list[Hashable] = []
        self._rows: dict[Hashable, int] = {}
        # rows [0, _m) are in the buffers and the table; rows [_m, len(_keys)) are the tail:
        # 64-bit int codes added one at a time, kept in Python (a dict per block: block value
        # -> row, or a list of rows) so that add + query cost no numba call. Every reader
        # of the buffers moves the tail into them first (_flush), in one bulk kernel call.
        self._m = 0
        self._tail_codes: list[int] = []  # row _m + i's code (-1: removed)
        self._tail: list[dict[int, int | list[int]]] = [{} for _ in self._bounds]
        # the last add's (code, row), filed into the tail by the next query (fused with its
        # lookups) or by any other reader
        self._pending: tuple[int, int] | None = None
        nb = len(self._bounds)
        self._tab: I64 = engine.kernels("lsh").new_table(512, 256, nb, 0, 8 + 2 * nb)
        self._tab[8 : 8 + nb] = self._starts
        self._tab[8 + nb : 8 + 2 * nb] = self._ends
        self._bind()

    def _bind(self) -> None:
        """Keep the per-call kernels and output buffers on the instance (not pickled)."""
        kern = engine.kernels("hamming")
        self._query_code = kern.query_code
        self._table_query = kern.table_query
        self._out_rows = np.empty(64, dtype=np.int64)
        self._out_d = np.empty(64, dtype=np.int64)
        self._tail_blocks = [
            (table, s, (1 << (e - s)) - 1)
            for table, (s, e) in zip(self._tail, self._bounds, strict=True)
        ]

    _UNPICKLED = (
        "_query_code", "_table_query", "_out_rows", "_out_d", "_tail_blocks",
    )  # fmt: skip

    def __getstate__(self) -> dict[str, object]:
        self._flush()
        state = {k: v for k, v in self.__dict__.items() if k not in self._UNPICKLED}
        del state["_tail"]  # empty after the flush; rebuilt by __setstate__
        state["_mark"] = np.zeros(len(self._alive_buf), dtype=np.int64)
        state["_tab"] = self._tab.copy()
        state["_tab"][2] = 0  # the query stamp restarts with the fresh marks
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        # pickles of older versions have no pending add and no tail (and never hold one)
        self._pending = None
        self._tail_codes = []
        self.__dict__.update(state)
        self._tail = [{} for _ in self._bounds]
        self._m = len(self._keys)
        self._bind()

    @property
    def _codes(self) -> U64:
        """The used rows of the code buffer (a view: updates reach the buffer)."""
        self._flush()
        return self._codes_buf[: len(self._keys)]

    @property
    def _alive(self) -> npt.NDArray[np.bool_]:
        """The used rows of the liveness buffer (a view)."""
        self._flush()
        return self._alive_buf[: len(self._keys)]

    def _file_pending(self) -> None:
        """File the pending code of the last :meth:`add` into the tail."""
        pending = self._pending
        if pending is None:
            return
        self._pending = None
        self._file_tail(pending[0], pending[1], [])

    def _file_tail(self, code: int, row: int, hits: list[int]) -> None:
        """File ``code`` as tail row ``row``; the rows already in its buckets go to ``hits``
        (repeats when they share several blocks)."""
        for table, shift, mask in self._tail_blocks:
            v = (code >> shift) & mask
            bucket = table.get(v)
            if bucket is None:
                table[v] = row
            elif isinstance(bucket, int):
                table[v] = [bucket, row]
                hits.append(bucket)
            else:
                hits += bucket
                bucket.append(row)

    def _flush(self) -> None:
        """Move the pending code and the tail into the buffers and the table (every reader
        of them calls this first): one bulk kernel call."""
        self._pending = None  # its code is in the tail's codes already
        tail = self._tail_codes
        if not tail:
            return
        m, k = self._m, len(tail)
        self._room(k, m)
        self._codes_buf[m : m + k, 0] = [max(c, 0) for c in tail]
        self._alive_buf[m : m + k] = [c >= 0 for c in tail]
        engine.kernels("hamming").table_add(self._codes_buf, m, k, self._tab)
        self._m = m + k
        self._tail_codes = []
        for table in self._tail:
            table.clear()

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
        if self._pending is not None:
            self._file_pending()
        if (
            type(code) is int
            and self._words == 1
            and 0 <= code <= _MASK64
            and key not in self._rows
        ):
            # a tail row, filed by the next query (with its lookups: datasketch's pattern) or
            # by any other reader
            n = len(self._keys)
            self._pending = (code, n)
            self._tail_codes.append(code)
            self._keys.append(key)
            self._rows[key] = n
            return
        self._append([key], self._row(code).reshape(1, -1))

    def _reserve(self, k: int, n: int | None = None) -> None:
        """Room for ``k`` more rows after all (the tail moved into the buffers), their
        table entries, and a table at most 3/4 full."""
        self._flush()
        self._room(k, len(self._keys) if n is None else n)

    def _room(self, k: int, n: int) -> None:
        """:meth:`_reserve` for rows after the first ``n`` (no flush)."""
        if n + k > len(self._alive_buf):
            cap = max(n + k, 2 * len(self._alive_buf), 64)
            grow_array(self, "_codes_buf", (cap, self._words), n)
            grow_array(self, "_alive_buf", (cap,), n)
            grow_array(self, "_mark", (cap,), n)
        grow_table(self, k * len(self._bounds))

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
        fresh = self._rows.keys().isdisjoint(keys) and len(set(keys)) == len(keys)
        if fresh:  # the common case, without a Python-level loop
            self._rows.update(zip(keys, range(start, start + len(keys)), strict=True))
        for i, key in enumerate([] if fresh else keys):
            old = self._rows.get(key)
            if old is not None:
                if old >= start:
                    alive[old - start] = False
                else:
                    self._alive[old] = False
            self._rows[key] = start + i
        self._reserve(len(keys))
        n = start + len(keys)
        self._codes_buf[start:n] = rows
        self._alive_buf[start:n] = alive
        self._keys.extend(keys)
        engine.kernels("hamming").table_add(self._codes_buf, start, len(keys), self._tab)
        self._m = n
        self._maintain()

    def remove(self, key: Hashable) -> None:
        """Remove ``key``.

        Raises:
            InputError: ``key`` is not in the index.
        """
        row = self._rows.pop(key, None)
        if row is None:
            raise InputError(f"key {key!r} is not in the index; check `key in index` first")
        if row < self._m:
            self._alive_buf[row] = False
        else:  # a tail row: out of its buckets
            self._file_pending()
            code = self._tail_codes[row - self._m]
            self._tail_codes[row - self._m] = -1
            for table, shift, mask in self._tail_blocks:
                v = (code >> shift) & mask
                bucket = table[v]
                if isinstance(bucket, int):
                    del table[v]
                else:
                    bucket.remove(row)
                    if len(bucket) == 1:
                        table[v] = bucket[0]
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
        if r < len(self._bounds):
            if type(code) is int and self._words == 1 and 0 <= code <= _MASK64:
                return self._query_int(code, r)
            q = self._row(code).reshape(1, -1)
            self._flush()
            found = self._table_query(
                q, r, self._codes_buf, self._alive_buf,
                self._mark, self._tab, self._out_rows, self._out_d,
            )  # fmt: skip
            if found < 0:  # more hits than the output buffers hold: grow them, ask again
                self._out_rows = np.empty(2 * -found, dtype=np.int64)
                self._out_d = np.empty(2 * -found, dtype=np.int64)
                return self.query(code, radius)
            keys = self._keys
            rows, dist = self._out_rows[:found].tolist(), self._out_d[:found].tolist()
            return [(keys[i], d) for i, d in zip(rows, dist, strict=False)]
        q = self._row(code)
        n = len(self._keys)
        cand = np.arange(n, dtype=np.int64)
        cand = cand[self._alive[cand]]
        d = np.bitwise_count(self._codes[cand] ^ q).sum(axis=1, dtype=np.int64)
        keep = d <= r
        cand, d = cand[keep], d[keep]
        order_ = np.lexsort((cand, d))
        return [(self._keys[int(i)], int(x)) for i, x in zip(cand[order_], d[order_], strict=True)]

    def _query_int(self, code: int, r: int) -> list[tuple[Hashable, int]]:
        """:meth:`query` of a 64-bit int code within ``r < blocks``: the tail in Python,
        then the table (one numba call) when rows have moved into it."""
        hits: list[int] = []  # candidate tail rows (repeats when they share several blocks)
        pending = self._pending
        if pending is not None and pending[0] == code:  # add a code, then query it
            self._pending = None
            row = pending[1]
            self._file_tail(code, row, hits)  # file it and look up at once
            found = [(0, row)]  # itself, at distance 0
        else:
            if pending is not None:
                self._file_pending()
            for table, shift, mask in self._tail_blocks:
                bucket = table.get((code >> shift) & mask)
                if bucket is None:
                    continue
                if isinstance(bucket, int):
                    hits.append(bucket)
                else:
                    hits += bucket
            found = []
        keys = self._keys
        if hits:
            m, codes = self._m, self._tail_codes
            for i in set(hits) if len(hits) > 1 else hits:
                d = (codes[i - m] ^ code).bit_count()
                if d <= r:
                    found.append((d, i))
        if self._m:
            c64 = code if code < _SIGN else code - _WRAP
            n = self._query_code(
                c64, r, self._codes_buf, self._alive_buf, self._mark, self._tab,
                self._out_rows, self._out_d,
            )  # fmt: skip
            if n < 0:  # more hits than the output buffers hold: grow them, ask again
                self._out_rows = np.empty(2 * -n, dtype=np.int64)
                self._out_d = np.empty(2 * -n, dtype=np.int64)
                return self._query_int(code, r)
            found += zip(self._out_d[:n].tolist(), self._out_rows[:n].tolist(), strict=True)
        elif len(found) == 1:
            d, i = found[0]
            return [(keys[i], d)]
        found.sort()
        return [(keys[i], d) for d, i in found]

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
        by ``key_a``'s then ``key_b``'s insertion. The numba kernel sorts the codes by each
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
