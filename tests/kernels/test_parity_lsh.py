"""The lsh family: the native table kernels and ``BandIndex`` against their numpy twins
(``neardup._kernels.lsh`` and its ``BandIndex``): the same results, the same table
contents, the same errors, on hypothesis inputs."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from twins import same_result

from conftest import native_pair
from neardup._kernels.lsh import NO_ROOM, plan_growth
from neardup.sketch.minhash import MinHash

_MAX64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_MAX32 = np.uint64(0xFFFFFFFF)


def pair() -> tuple[Any, Any]:
    return native_pair("lsh")


@st.composite
def sketches(draw: st.DrawFn, max_rows: int = 24) -> tuple[int, int, int, np.ndarray]:
    """``(num_perm, bands, rows, values)``: rows drawn from a few bases with a few slots
    changed (so that bands collide), some empty rows, as uint64 or uint32."""
    rows = draw(st.integers(1, 4))
    bands = draw(st.integers(1, 5))
    num_perm = bands * rows + draw(st.integers(0, 2))
    n = draw(st.integers(0, max_rows))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    wide = draw(st.booleans())
    top = 1 << 40 if wide else 1 << 32
    bases = rng.integers(0, top, size=(2, num_perm), dtype=np.uint64)
    out = bases[rng.integers(0, 2, size=n)].copy()
    for i in range(n):
        k = int(rng.integers(0, 3)) * int(rng.integers(0, 2))
        out[i, rng.integers(0, num_perm, size=k)] = rng.integers(0, 4, size=k, dtype=np.uint64)
        kind = int(rng.integers(0, 12))
        if kind == 0:
            out[i] = _MAX64
        elif kind == 1:
            out[i] = _MAX32
    return num_perm, bands, rows, out if wide else out.astype(np.uint32)


class _State:
    """Arrays of one table and its rows, one copy per twin."""

    def __init__(self, mod: Any, num_perm: int, bands: int, rows: int, cap: int) -> None:
        self.mod = mod
        self.tab = mod.new_table(8, 4, bands, rows, 8)
        self.sig32 = np.zeros((cap, num_perm), dtype=np.uint32)
        self.state = np.zeros(cap, dtype=np.uint8)
        self.mark = np.zeros(cap, dtype=np.int64)

    def arrays(self) -> tuple[np.ndarray, ...]:
        return self.tab, self.sig32, self.state, self.mark

    def room(self, more: int) -> None:
        used, entries, slots, cap = (int(x) for x in self.tab[[0, 1, 3, 4]])
        new_slots, new_cap = plan_growth(used, entries, slots, cap, more)
        if (new_slots, new_cap) != (slots, cap):
            self.tab = self.mod.grow(self.tab, new_slots, new_cap)


@settings(max_examples=80)
@given(sketches(), st.floats(-1.0, 1.0), st.integers(0, 2**32 - 1))
def test_table_kernels(case: tuple[int, int, int, np.ndarray], min_est: float, seed: int) -> None:
    native, reference = pair()
    num_perm, bands, rows, values = case
    n = len(values)
    assert np.array_equal(
        native.new_table(8, 4, bands, rows, 8), reference.new_table(8, 4, bands, rows, 8)
    )
    ours = [_State(m, num_perm, bands, rows, n + 2) for m in (native, reference)]
    half = n // 2
    # the first half in one call (after the table grows), the rest one by one, some fused
    for s in ours:
        assert s.mod.add_rows(values[:half], 0, s.sig32, s.state, s.tab) in (0, -1)
        s.room(half * bands)
        assert s.mod.add_rows(values[:half], 0, s.sig32, s.state, s.tab) == 0
    same_result(ours[0].arrays(), ours[1].arrays())
    rng = np.random.default_rng(seed)
    for r in range(half, n):
        q = values[int(rng.integers(0, n))]
        m = int(rng.integers(0, 4))
        outs = []
        for s in ours:
            s.room(bands)
            rows_out = np.zeros(m, dtype=np.int64)
            est_out = np.zeros(m, dtype=np.float64)
            if r % 3 == 0:
                got = s.mod.add_query_one(
                    values[r], r, q, s.sig32, s.state, s.mark, s.tab, rows_out, est_out, min_est
                )
            elif r % 3 == 1:
                rows_out = np.zeros(2 * m, dtype=np.int64)
                got = s.mod.add_query_same(
                    values[r], r, s.sig32, s.state, s.mark, s.tab, rows_out, min_est
                )
            else:
                got = s.mod.add_rows(values[r], r, s.sig32, s.state, s.tab)
            assert got != NO_ROOM
            outs.append((got, rows_out, est_out, *s.arrays()))
        same_result(outs[0], outs[1])
    if n:
        s0, s1 = ours
        s0.state[::3] = 0
        s1.state[::3] = 0
        for q in values[: min(n, 6)]:
            res = []
            for s in ours:
                out_rows = np.zeros(8, dtype=np.int64)
                out_est = np.zeros(8, dtype=np.float64)
                got = s.mod.query_one(
                    q, s.sig32, s.state, s.mark, s.tab, out_rows, out_est, min_est
                )
                cand = np.zeros(8, dtype=np.int64)
                got2 = s.mod.candidates_one(q, s.state, s.mark, s.tab, cand)
                res.append((got, out_rows, out_est, got2, cand, *s.arrays()))
            same_result(res[0], res[1])
        res = [
            (
                s.mod.query_rows(values, s.sig32, s.state, s.mark, s.tab, min_est),
                s.mod.candidate_rows(values, s.state, s.mark, s.tab),
                *s.arrays(),
            )
            for s in ours
        ]
        same_result(res[0], res[1])
        live = np.flatnonzero(s0.state == 1).astype(np.int64)
        for s in ours:
            s.tab = s.mod.new_table(8, 4, bands, rows, 8)
            s.room(len(live) * bands)
        same_result([s.mod.insert_rows(live, s.sig32, s.tab) for s in ours], [0, 0])
        same_result(ours[0].tab, ours[1].tab)


def test_kernel_errors_are_the_same() -> None:
    native, reference = pair()
    sig32 = np.zeros((4, 4), dtype=np.uint32)
    state = np.zeros(4, dtype=np.uint8)
    for mod in (native, reference):
        mod.new_table(8, 4, 2, 2, 8)
    cases = [
        lambda m: m.new_table(6, 4, 2, 2, 8),
        lambda m: m.grow(m.new_table(8, 4, 2, 2, 8), 3, 4),
        lambda m: m.add_rows(np.zeros(4, np.int64), 0, sig32, state, m.new_table(8, 8, 2, 2, 8)),
        lambda m: m.add_rows(np.zeros(5, np.uint64), 0, sig32, state, m.new_table(8, 8, 2, 2, 8)),
        lambda m: m.query_one(
            np.zeros(3, np.uint64), sig32, state, np.zeros(4, np.int64),
            m.new_table(8, 8, 2, 2, 8), np.zeros(2, np.int64), np.zeros(2), 0.0,
        ),
        lambda m: m.candidate_rows(
            np.zeros(4, np.uint32), state, np.zeros(4, np.int64), m.new_table(8, 8, 2, 2, 8)
        ),
        lambda m: m.candidates_one(
            [1, 2], state, np.zeros(4, np.int64), m.new_table(8, 8, 2, 2, 8),
            np.zeros(2, np.int64),
        ),
    ]  # fmt: skip
    for case in cases:
        errors = []
        for mod in (native, reference):
            with pytest.raises((TypeError, ValueError)) as info:
                case(mod)
            errors.append((type(info.value), str(info.value)))
        assert errors[0] == errors[1]


# ---------------------------------------------------------------------- BandIndex


def _index(mod: Any, num_perm: int, bands: int, rows: int, exact: bool = False) -> Any:
    """A ``BandIndex`` of ``mod`` whose general paths record what reached them."""

    class Index(mod.BandIndex):  # type: ignore[misc,name-defined]
        def _add_general(self, key: Hashable, mh: object) -> None:
            self.general.append(("add", key))
            self._params = (mh.scheme, mh.params)  # type: ignore[attr-defined]
            if key in self:
                self.remove(key)
            self._append([key], np.asarray([mh.hashvalues]))  # type: ignore[attr-defined]

        def _query_general(self, mh: object, min_similarity: float | None) -> object:
            self.general.append(("query",))
            return "general"

        def _candidates_general(self, values: object) -> object:
            self.general.append(("candidates",))
            return "general"

    index = Index()
    index.general = []
    index._setup(num_perm, bands, rows, MinHash, exact)
    return index


def _dump(index: Any) -> dict[str, object]:
    return {**index._dump(), "general": list(index.general)}


@settings(max_examples=60)
@given(sketches(max_rows=40), st.lists(st.integers(0, 2**16), min_size=1, max_size=60))
def test_band_index(case: tuple[int, int, int, np.ndarray], ops: list[int]) -> None:
    native, reference = pair()
    num_perm, bands, rows, values = case
    if not len(values):
        return
    values = values.astype(np.uint64)
    sk = [MinHash(v, "xxh3", "p") for v in values]
    other = MinHash(values[0], "xxh3", "q")
    twins = [_index(m, num_perm, bands, rows) for m in (native, reference)]
    n = len(values)
    same_result(
        [[(t.add(i, sk[i]), t.query(sk[i]))[1] for i in range(n)] for t in twins[:1]],
        [[(t.add(i, sk[i]), t.query(sk[i]))[1] for i in range(n)] for t in twins[1:]],
    )
    for step, op in enumerate(ops):
        kind, i = op % 11, (op // 11) % n
        key = (op // 7) % (n + 3)
        got = []
        for index in twins:
            if kind in (0, 1, 2):
                index.add(key, sk[i])
                got.append(index.query(sk[i], min_similarity=(op % 5) / 5 if op % 2 else None))
            elif kind == 3:
                got.append(index.query(sk[i]))
            elif kind == 4:
                if key in index:
                    index.remove(key)
                    got.append(True)
                else:
                    with pytest.raises(Exception) as info:
                        index.remove(key)
                    got.append((type(info.value).__name__, str(info.value)))
            elif kind == 5:
                got.append((index.candidates(values[i]), index.candidates([1])))
            elif kind == 6:
                keys = [("bulk", step, j) for j in range(3)]
                index._append(keys, values[[i, (i + 1) % n, (i + 2) % n]].astype(np.uint32))
                got.append(index._query_lists(values, (op % 3) / 3))
            elif kind == 7:
                got.append(index._candidate_lists(values))
            elif kind == 8:
                index._maybe_compact()
                got.append((index._live(), index._arrays(), len(index), index._nbytes()))
            elif kind == 9:
                state = index._dump()
                index._setup(num_perm, bands, rows, MinHash)
                index._load(state)
                got.append((index.query(other), index.key_of(index._n - 1) if index._n else None))
            else:
                c = min(4, n)
                keys = list(range(1000 + 10 * step, 1000 + 10 * step + c))
                index._restore(keys, values[:c], np.ones(c, np.uint8))
                got.append(index._live())
            got[-1] = (got[-1], _dump(index))
        same_result(got[0], got[1])


@settings(max_examples=60)
@given(sketches(max_rows=40), st.lists(st.integers(0, 2**16), min_size=1, max_size=60))
def test_band_index_exact_mode(case: tuple[int, int, int, np.ndarray], ops: list[int]) -> None:
    native, reference = pair()
    num_perm, bands, rows, values = case
    if not len(values):
        return
    twins = [_index(m, num_perm, bands, rows, exact=True) for m in (native, reference)]
    n = len(values)
    wide = values.astype(np.uint64)
    same_result(
        [
            [(t._insert_values(i, v), t._candidates_exact(v)) for i, v in enumerate(values)]
            for t in twins[:1]
        ],
        [
            [(t._insert_values(i, v), t._candidates_exact(v)) for i, v in enumerate(values)]
            for t in twins[1:]
        ],
    )
    for step, op in enumerate(ops):
        kind, i = op % 6, (op // 6) % n
        key = (op // 5) % (n + 3)
        got = []
        for index in twins:
            if kind in (0, 1):
                got.append(
                    (index._insert_values(key, values[i]), index._candidates_exact(values[i]))
                )
            elif kind == 2:
                got.append((index._candidates_exact(wide[i]), index._candidates_exact([1])))
            elif kind == 3:
                if key in index:
                    index.remove(key)
                got.append(index._candidate_lists(values))
            elif kind == 4:
                index._append([("bulk", step)], values[i : i + 1])
                got.append(index._live())
            else:
                state = index._dump()
                index._setup(num_perm, bands, rows, None, True)
                index._load(state)
                got.append((index._live(), index._width))
            got[-1] = (got[-1], _dump(index))
        same_result(got[0], got[1])


def test_band_index_errors_are_the_same() -> None:
    native, reference = pair()
    cases = [
        lambda i: i._setup(4, 3, 2),
        lambda i: i._append([1, 2], np.zeros((1, 4), np.uint64)),
        lambda i: i._append([1], np.zeros((1, 4), np.int64)),
        lambda i: i._query_lists(np.zeros(6, np.uint64), 0.0),
        lambda i: i.remove("absent"),
        lambda i: i._restore([1, 2], np.zeros((1, 4), np.uint32), np.ones(2, np.uint8)),
    ]
    for case in cases:
        errors = []
        for mod in (native, reference):
            index = _index(mod, 4, 2, 2)
            with pytest.raises(Exception) as info:
                case(index)
            errors.append((type(info.value).__name__, str(info.value)))
        assert errors[0] == errors[1]
    for mod in (native, reference):
        with pytest.raises(ValueError, match="not set up"):
            mod.BandIndex().query(None)


# ---------------------------------------------------------------------- through LSHIndex

_RUN = """
import pickle, sys
import numpy as np
from neardup.index.lsh import LSHIndex
from neardup.sketch.minhash import MinHash

def run(sigs, queries):
    index = LSHIndex(0.5, 12, bands=4, rows=3)
    index.add_many([str(i) for i in range(len(sigs))], sigs)
    many = index.query_many(queries)
    cands = index.candidates_many(queries)
    one = []
    for i, q in enumerate(queries):  # one at a time: add, then query
        m = MinHash(q, "xxh3", "p")
        index.add(f"q{i}", m)
        one.append((index.query(m), index.candidates(q)))
    if "0" in index:
        index.remove("0")
    again = pickle.loads(pickle.dumps(index))
    return many, one, cands, index.to_bytes(), sorted(index.pairs()), again.to_bytes()

cases = pickle.load(sys.stdin.buffer)
pickle.dump([run(s, q) for s, q in cases], sys.stdout.buffer)
"""


def test_lsh_index_on_both_twins() -> None:
    """The same hits, candidates, pairs and bytes from LSHIndex on the native BandIndex and,
    in a process under ``NEARDUP_BACKEND=reference``, on its numpy twin."""
    import os
    import pickle
    import subprocess
    import sys

    native_pair("lsh")  # skips without the compiled family
    rng = np.random.default_rng(5)
    cases = []
    for n in (0, 1, 7, 30):
        sigs = rng.integers(0, 4, size=(n, 12), dtype=np.uint64)
        sigs[::5] = np.uint64(0xFFFFFFFF)  # some empty sketches
        cases.append((sigs, rng.integers(0, 4, size=(4, 12), dtype=np.uint64)))
    got = []
    for env in ("native", "reference"):
        proc = subprocess.run(
            [sys.executable, "-c", _RUN],
            input=pickle.dumps(cases),
            env={**os.environ, "NEARDUP_BACKEND": env},
            capture_output=True,
            check=True,
        )
        got.append(pickle.loads(proc.stdout))
    assert got[0] == got[1]
