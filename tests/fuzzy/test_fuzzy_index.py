"""CTPHIndex and TLSHIndex return exactly what an exhaustive comparison returns."""

from __future__ import annotations

import itertools
from functools import cache

import pytest
from fuzzy_corpus import edited_files, machine_files

from neardup.errors import ConfigError, FormatError
from neardup.fuzzy import CTPHIndex, TLSHIndex, ctph_compare, ctph_many, tlsh_distance


@cache
def ctph_digests() -> list[str]:
    originals = [d for _, d in machine_files()]
    edits = [e for _, _, e in edited_files()[::3]]
    return ctph_many(originals + edits)


def _brute_ctph(digests: list[str], min_score: int, scoring: str) -> list[tuple[int, int, int]]:
    out = []
    for i, j in itertools.combinations(range(len(digests)), 2):
        score = ctph_compare(digests[i], digests[j], scoring=scoring)  # type: ignore[arg-type]
        if score >= min_score:
            out.append((i, j, score))
    return out


@pytest.mark.parametrize(("min_score", "scoring"), [(1, "ssdeep"), (60, "ssdeep"), (1, "ppdeep")])
def test_ctph_pairs_equal_exhaustive(min_score: int, scoring: str) -> None:
    digests = ctph_digests()[:400]
    index = CTPHIndex(scoring=scoring)  # type: ignore[arg-type]
    assert index.add_many(digests) == list(range(len(digests)))
    assert len(index) == len(digests)
    found = list(index.pairs(min_score))
    assert found == _brute_ctph(digests, min_score, scoring)
    assert len(found) > 50


def test_ctph_query_equals_exhaustive() -> None:
    digests = ctph_digests()
    index = CTPHIndex()
    index.add_many(digests)
    for q in digests[::25]:
        expected = sorted(
            ((i, s) for i, d in enumerate(digests) if (s := ctph_compare(q, d)) >= 1),
            key=lambda hit: (-hit[1], hit[0]),
        )
        assert index.query(q) == expected


def test_ctph_identical_short_digests_are_found() -> None:
    index = CTPHIndex()
    index.add_many(["3:Hn:Hn", "3:Hn:Hn", "3:Hn:Ho", "6:Hn:Hn"])
    assert list(index.pairs()) == [(0, 1, 100)]
    assert index.query("3:Hn:Hn", min_score=100) == [(0, 100), (1, 100)]
    ppdeep_index = CTPHIndex(scoring="ppdeep")
    ppdeep_index.add_many(["3:Hn:Hn", "3:Hn:Ho"])
    assert list(ppdeep_index.pairs()) == [(0, 1, 100)]


def test_ctph_index_errors() -> None:
    index = CTPHIndex()
    with pytest.raises(FormatError):
        index.add("not a digest")
    assert len(index) == 0
    with pytest.raises(ConfigError):
        index.query("3:a:b", min_score=0)
    with pytest.raises(ConfigError):
        list(index.pairs(min_score=101))
    with pytest.raises(ConfigError):
        CTPHIndex(scoring="md5")  # type: ignore[arg-type]


@cache
def tlsh_digests() -> list[str]:
    tlsh = pytest.importorskip("tlsh")
    datas = [d for _, d in machine_files()] + [e for _, _, e in edited_files()[::4]]
    return [h for h in (tlsh.hash(d) for d in datas) if h != "TNULL"]


@pytest.mark.parametrize(("max_distance", "len_diff"), [(30, True), (100, True), (80, False)])
def test_tlsh_pairs_equal_exhaustive(max_distance: int, len_diff: bool) -> None:
    tlsh = pytest.importorskip("tlsh")
    digests = tlsh_digests()[:300]
    index = TLSHIndex(len_diff=len_diff)
    index.add_many(digests[:100])
    for d in digests[100:]:
        index.add(d)
    diff = tlsh.diff if len_diff else tlsh.diffxlen
    expected = [
        (i, j, diff(digests[i], digests[j]))
        for i, j in itertools.combinations(range(len(digests)), 2)
        if diff(digests[i], digests[j]) <= max_distance
    ]
    assert list(index.pairs(max_distance)) == expected
    assert len(expected) > 20


def test_tlsh_query_sorted_and_exact() -> None:
    digests = tlsh_digests()
    index = TLSHIndex()
    index.add_many(digests)
    assert len(index) == len(digests)
    for q in digests[::40]:
        expected = sorted(
            ((i, dist) for i, d in enumerate(digests) if (dist := tlsh_distance(q, d)) <= 150),
            key=lambda hit: (hit[1], hit[0]),
        )
        assert index.query(q, 150) == expected


def test_tlsh_index_errors() -> None:
    index = TLSHIndex()
    with pytest.raises(FormatError):
        index.add_many(["T1" + "12" * 35, "TNULL"])
    assert len(index) == 0  # all or nothing
    with pytest.raises(ConfigError):
        index.query("T1" + "12" * 35, -1)
    assert list(index.pairs()) == []
    assert index.query("T1" + "12" * 35) == []


def test_indexes_pickle_and_round_trip_bytes() -> None:
    import pickle

    ctph = CTPHIndex(scoring="ppdeep")
    ctph.add_many(
        ["3:AXGBicFlgVNhBGcL6wCrFQEv:AXGHsNhxLsr2C", "3:AXGBicFlIHBGcL6wCrFQEv:AXGH6xLsr2C"]
    )
    for copy in (pickle.loads(pickle.dumps(ctph)), CTPHIndex.from_bytes(ctph.to_bytes())):
        assert list(copy.pairs(min_score=10)) == list(ctph.pairs(min_score=10))
        assert len(copy) == 2
    tlsh = TLSHIndex(len_diff=False)
    tlsh.add_many(["T1" + "12" * 35, "T1" + "12" * 34 + "13", "T1" + "F0" * 35])
    for copy2 in (pickle.loads(pickle.dumps(tlsh)), TLSHIndex.from_bytes(tlsh.to_bytes())):
        assert list(copy2.pairs(max_distance=10)) == list(tlsh.pairs(max_distance=10))
        assert len(copy2) == 3
    with pytest.raises(FormatError, match="NDTL"):
        TLSHIndex.from_bytes(ctph.to_bytes())
    with pytest.raises(FormatError, match="truncated"):
        CTPHIndex.from_bytes(ctph.to_bytes()[:-2])


def test_ctph_index_reads_the_state_of_the_python_only_version() -> None:
    """A pickle of the index before the compiled table: parsed digests in ``_digests``."""
    from neardup.fuzzy import parse_ctph

    digests = ["3:AXGBicFlgVNhBGcL6wCrFQEv:AXGHsNhxLsr2C", "3:AXGBicFlIHBGcL6wCrFQEv:AXGH6xLsr2C"]
    index = CTPHIndex.__new__(CTPHIndex)
    index.__setstate__({"_scoring": "ppdeep", "_digests": [parse_ctph(d) for d in digests]})
    assert len(index) == 2
    assert index._scoring == "ppdeep"
    assert list(index.pairs(10)) == [(0, 1, ctph_compare(*digests, scoring="ppdeep"))]
