"""Exact set intersections: fast and reference agree with Python sets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from twins import on_both_backends

from neardup._kernels import engine
from neardup.sketch import sets


@given(
    docs=st.lists(st.lists(st.integers(0, 50), max_size=30), min_size=2, max_size=8), data=st.data()
)
def test_jaccard_matches_python_sets(docs: list[list[int]], data: st.DataObject) -> None:
    values = np.array([v for d in docs for v in d], dtype=np.uint64)
    offsets = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "_choice", engine.parse_backend("reference"))
        rv, ro = sets.unique_per_doc(values, offsets)
        mp.setattr(engine, "_choice", engine.parse_backend("fast"))
        uv, uo = sets.unique_per_doc(values, offsets)
    np.testing.assert_array_equal(uv, rv)
    np.testing.assert_array_equal(uo, ro)
    for i, d in enumerate(docs):
        assert uv[uo[i] : uo[i + 1]].tolist() == sorted(set(d))
    n = len(docs)
    a = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=10)))
    b = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=len(a), max_size=len(a))))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "_choice", engine.parse_backend("reference"))
        ref = sets.jaccard_pairs(uv, uo, a, b)
        mp.setattr(engine, "_choice", engine.parse_backend("fast"))
        got = sets.jaccard_pairs(uv, uo, a, b)
    np.testing.assert_array_equal(got, ref)
    for k in range(len(a)):
        x, y = set(docs[a[k]]), set(docs[b[k]])
        want = len(x & y) / len(x | y) if x | y else 0.0
        assert got[k] == pytest.approx(want)


def _bucket_pairs(keys, items, cap, codes, radius):  # type: ignore[no-untyped-def]
    return sets.bucket_pairs(keys, items, cap, codes=codes, radius=radius)


@given(
    buckets=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 30)), max_size=60),
    cap=st.integers(2, 8),
    radius=st.integers(-1, 3),
)
def test_bucket_pairs_match_brute_force(
    buckets: list[tuple[int, int]], cap: int, radius: int
) -> None:
    keys = np.array([k for k, _ in buckets], dtype=np.uint64)
    items = np.array([i for _, i in buckets], dtype=np.int64)
    # each item has one 2-word code; the Hamming filter keeps pairs within ``radius``
    code_of = {i: [(i * 7) % 5, (i * 3) % 4] for i in range(31)}
    codes = np.array([code_of[i] for i in items.tolist()], dtype=np.uint64).reshape(-1, 2)

    def close(x: int, y: int) -> bool:
        bits = sum(bin(p ^ q).count("1") for p, q in zip(code_of[x], code_of[y], strict=True))
        return radius < 0 or bits <= radius

    ref, got = on_both_backends(_bucket_pairs, keys, items, cap, codes, radius)
    assert sorted(zip(*ref[:2], strict=True)) == sorted(zip(*got[:2], strict=True))
    assert ref[2:] == got[2:]
    want: set[tuple[int, int]] = set()
    over, largest = 0, 0
    for key in set(keys.tolist()):
        run = sorted(items[keys == key].tolist())
        largest = max(largest, len(run))
        over += len(run) > cap
        for u in range(len(run)):
            for v in range(u + 1, min(len(run), u + cap)):
                if run[u] != run[v] and close(run[u], run[v]):
                    want.add((run[u], run[v]))
    pairs = list(zip(got[0].tolist(), got[1].tolist(), strict=True))
    assert set(pairs) == want and all(a < b for a, b in pairs)
    assert got[2:] == (over, largest)


@given(pairs=st.lists(st.tuples(st.integers(0, 9), st.integers(-5, 2**40)), max_size=80))
def test_unique_pairs_match_python_sets(pairs: list[tuple[int, int]]) -> None:
    a = np.array([p[0] for p in pairs], dtype=np.int64)
    b = np.array([p[1] for p in pairs], dtype=np.int64)
    ref, got = on_both_backends(sets.unique_pairs, a, b, 10)
    want = sorted(set(pairs))
    for x, y in (ref, got):
        assert list(zip(x.tolist(), y.tolist(), strict=True)) == want


@given(
    docs=st.lists(
        st.lists(
            st.integers(0, 2**64 - 1) | st.integers(0, 40).map(lambda x: x << 32), max_size=30
        ),
        max_size=8,
    )
)
def test_unique_per_doc32_is_the_set_of_top_halves(docs: list[list[int]]) -> None:
    values = np.array([v for d in docs for v in d], dtype=np.uint64)
    offsets = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
    ref, got = on_both_backends(sets.unique_per_doc32, values, offsets)
    for (rv, ro), (gv, go) in ((ref, got),):
        assert rv.dtype == gv.dtype == np.uint32
        np.testing.assert_array_equal(gv, rv)
        np.testing.assert_array_equal(go, ro)
    gv, go = got
    for i, d in enumerate(docs):
        assert gv[go[i] : go[i + 1]].tolist() == sorted({v >> 32 for v in d})


@given(
    sizes=st.lists(st.integers(0, 700), min_size=1, max_size=6),
    spread=st.sampled_from([64, 8, 3, 1]),
    seed=st.integers(0, 2**32 - 1),
)
def test_unique_per_doc32_long_runs(sizes: list[int], spread: int, seed: int) -> None:
    """Runs long enough for the bucket sort of ``sort_unique``, with values uniform over 32
    bits (``spread`` 64), skewed into few buckets (8, 3: the ``ndarray.sort`` fallback) or
    two top halves (1), give the sorted distinct top halves, as the reference does."""
    rng = np.random.default_rng(seed)
    top = rng.integers(0, 2**spread, size=sum(sizes), dtype=np.uint64) << np.uint64(64 - spread)
    values = top | rng.integers(0, 2**32, size=len(top), dtype=np.uint64)
    if len(values) > 3:
        values[1::3] = values[::3][: len(values[1::3])]  # repeated values
    offsets = np.cumsum([0, *sizes]).astype(np.int64)
    ref, (gv, go) = on_both_backends(sets.unique_per_doc32, values, offsets)
    np.testing.assert_array_equal(gv, ref[0])
    np.testing.assert_array_equal(go, ref[1])
    for i in range(len(sizes)):
        want = np.unique((values[offsets[i] : offsets[i + 1]] >> np.uint64(32)).astype(np.uint32))
        np.testing.assert_array_equal(gv[go[i] : go[i + 1]], want)


def test_unique_per_doc32_run_beyond_the_buckets() -> None:
    """A run of more than 2**16 values (past the bucket sort's limit) is sorted too."""
    rng = np.random.default_rng(7)
    values = rng.integers(0, 2**64, size=70_000, dtype=np.uint64)
    offsets = np.array([0, 3, 70_000], dtype=np.int64)
    ref, got = on_both_backends(sets.unique_per_doc32, values, offsets)
    np.testing.assert_array_equal(got[0], ref[0])
    np.testing.assert_array_equal(got[1], ref[1])
    np.testing.assert_array_equal(
        got[0][3:], np.unique((values[3:] >> np.uint64(32)).astype(np.uint32))
    )


@given(
    docs=st.lists(
        st.tuples(st.integers(0, 12), st.lists(st.integers(0, 5000), max_size=40)), max_size=6
    )
)
def test_rice_codes_round_trip_and_the_twins_agree(docs: list[tuple[int, list[int]]]) -> None:
    deltas = np.array([d for _, ds in docs for d in ds], dtype=np.uint64)
    counts = np.array([len(ds) for _, ds in docs], dtype=np.int64)
    k = np.array([kk for kk, _ in docs], dtype=np.int64)
    bits = [len(ds) * (kk + 1) + sum(d >> kk for d in ds) for kk, ds in docs]
    nbytes = np.array([(b + 7) // 8 for b in bits], dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(nbytes))).astype(np.int64)
    out = {}
    for backend in ("reference", "fast"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(engine, "_choice", engine.parse_backend(backend))
            body = sets.rice_encode(deltas, counts, k, nbytes)
            got, ok = sets.rice_decode(body, starts, counts, k)
            # damaged: each blob one byte short (a value or its unary one goes missing)
            short = np.maximum(nbytes - 1, 0)
            pieces = [body[s : s + m] for s, m in zip(starts[:-1], short, strict=True)]
            cut = np.concatenate(pieces or [body])
            _, ok_short = sets.rice_decode(
                cut, np.concatenate(([0], np.cumsum(short))).astype(np.int64), counts, k
            )
        out[backend] = (body.tobytes(), got.tolist(), ok.tolist(), ok_short.tolist())
        assert got.tolist() == deltas.tolist() and ok.all()
        assert ok_short.tolist() == [int(c == 0) for c in counts.tolist()]
    assert out["reference"] == out["fast"]


@given(
    docs=st.lists(st.lists(st.integers(0, 2**64 - 1), max_size=300), max_size=6),
    shift=st.sampled_from([0, 40, 54]),  # 54: the cut makes many values equal
)
def test_rice_set_blobs_are_the_same_from_both_twins(docs: list[list[int]], shift: int) -> None:
    from neardup.sketch.setcodec import decode_sets, set_width

    sets_ = [sorted({v >> shift for v in d}) for d in docs]
    values = np.array([v for d in sets_ for v in d], dtype=np.uint64)
    offsets = np.cumsum([0] + [len(d) for d in sets_]).astype(np.int64)
    out = _rice_both(values, offsets)
    buf_bytes, at = out[1]
    blobs = [buf_bytes[at[i] : at[i + 1]] for i in range(len(sets_))]
    assert all(blob[:2] == b"S\x02" for blob in blobs)
    for s, got in zip(sets_, decode_sets(blobs), strict=True):
        w = set_width(len(s))
        assert got.width == w
        assert got.values.tolist() == sorted({v >> (64 - w) for v in s})


def _rice_both(values: np.ndarray, offsets: np.ndarray) -> list[tuple[bytes, list[int]]]:
    """``rice_sets`` on both backends; asserts they give the same bytes and starts."""
    out = []
    for backend in ("reference", "fast"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(engine, "_choice", engine.parse_backend(backend))
            buf, starts = sets.rice_sets(values, offsets, 10, 32)
        out.append((buf.tobytes(), starts.tolist()))
    assert out[0] == out[1]
    return out


@pytest.mark.parametrize("gap", [31, 32, 33, 64, 200, 5000])
def test_rice_set_blobs_with_long_unary_parts(gap: int) -> None:
    """A run of close values, then one far away: its high part is `gap`-ish zeros (the fast
    twin writes zeros 32 at a time), and the blob must still match and round-trip."""
    from neardup.sketch.setcodec import decode_sets, set_width

    w = set_width(201)
    close = [i << (64 - w) for i in range(200)]
    far = min((1 << w) - 1, 199 + gap * 2) << (64 - w)  # a delta of ~2 * gap
    values = np.array([*close, far], dtype=np.uint64)
    offsets = np.array([0, values.size], dtype=np.int64)
    out = _rice_both(values, offsets)
    (got,) = decode_sets([out[1][0]])
    assert got.values.tolist() == [int(v) >> (64 - w) for v in values.tolist()]
