"""The native clusterjson family against its twin (the json module and numpy): the same text
(or None), groups, member tuples and errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import native_pair
from neardup.errors import ConfigError
from neardup.report.results import Cluster

ids = st.one_of(
    st.text(max_size=8),
    st.text(alphabet=st.characters(codec="utf-8", max_codepoint=0x7F), max_size=6),
    st.sampled_from(['"', "\\", "\x00", "\x1f", "\x7f", "\n\t\r\b\f", "é", "\ud800", "a\udfff"]),
)
any_id = st.one_of(ids, ids, ids, st.integers(-5, 5))


@given(
    st.lists(
        st.tuples(
            st.one_of(st.integers(0, 10**6), st.integers(), st.booleans()),
            st.lists(any_id, max_size=5),
            any_id,
        ),
        max_size=6,
    )
)
def test_cluster_lines(rows: list[tuple[int, list[object], object]]) -> None:
    native, reference = native_pair("clusterjson")
    clusters = [Cluster(k, tuple(m), r) for k, m, r in rows]  # type: ignore[arg-type]
    got, want = native.cluster_lines(clusters), reference.cluster_lines(clusters)
    assert got == want
    if want is not None:
        encoder = json.JSONEncoder(ensure_ascii=False)
        assert want == "".join(encoder.encode(c.to_dict()) + "\n" for c in clusters)


def test_cluster_lines_of_lists_and_subclasses() -> None:
    native, reference = native_pair("clusterjson")

    class Sub(str):
        pass

    for clusters in (
        [Cluster(0, ["a", "b"], "a")],  # type: ignore[arg-type]
        [Cluster(0, (Sub("a"), "b"), "a")],
        [Cluster(2**63, ("a",), "a")],
        [],
    ):
        assert native.cluster_lines(clusters) == reference.cluster_lines(clusters)
    assert native.cluster_lines([]) == ""


@given(st.lists(st.integers(0, 30), max_size=40), st.booleans())
def test_cluster_groups(picks: list[int], union_find: bool) -> None:
    """The same groups, from union-find roots and from any roots that are rows."""
    native, reference = native_pair("clusterjson")
    n = len(picks)
    if union_find:  # what a walk gives: each row's root is the smallest row of its group
        roots = np.array([min(k, p % max(n, 1)) for k, p in enumerate(picks)], np.int64)
        roots = roots[roots]
    else:
        roots = np.array([p % max(n, 1) for p in picks], np.int64)
    got, want = native.cluster_groups(roots), reference.cluster_groups(roots)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype == np.int64
        assert g.tolist() == w.tolist()


@given(st.lists(st.integers(0, 20), min_size=1, max_size=30), st.data())
def test_member_tuples(picks: list[int], data: st.DataObject) -> None:
    native, reference = native_pair("clusterjson")
    ids: list[object] = [f"d{k}" for k in range(25)] + [3, None]
    order = np.array(picks, np.int64)
    cuts = sorted(data.draw(st.lists(st.integers(1, len(picks)), max_size=5, unique=True)))
    starts = np.array([0, *cuts], np.int64)
    got, want = (
        native.member_tuples(ids, order, starts),
        reference.member_tuples(ids, order, starts),
    )
    assert got == want
    assert all(type(t) is tuple for t in got)
    assert [m for t in got for m in t] == [ids[p] for p in picks]


def test_groups_and_tuples_the_same_errors() -> None:
    native, reference = native_pair("clusterjson")
    ids = ["a", "b", "c"]
    z = np.zeros(0, np.int64)
    assert native.member_tuples(ids, z, z) == reference.member_tuples(ids, z, z) == []
    assert native.member_tuples([], z, z) == []
    for kern in (native, reference):
        g = kern.cluster_groups(z)
        assert [len(g[0]), len(g[1])] == [0, 0]
    bad_roots = [np.array([0, 3, 1], np.int64), np.array([-1], np.int64)]
    bad_tuples = [
        (np.array([0, 3], np.int64), np.array([0], np.int64)),
        (np.array([0, -1], np.int64), np.array([0], np.int64)),
        (np.array([0, 1], np.int64), np.array([1], np.int64)),
        (np.array([0, 1], np.int64), np.array([0, 2, 1], np.int64)),
        (np.array([0, 1], np.int64), np.array([0, 3], np.int64)),
    ]
    for roots in bad_roots:
        messages = []
        for kern in (native, reference):
            with pytest.raises(ConfigError) as caught:
                kern.cluster_groups(roots)
            messages.append(str(caught.value))
        assert messages[0] == messages[1]
    for order, starts in bad_tuples:
        messages = []
        for kern in (native, reference):
            with pytest.raises(ConfigError) as caught:
                kern.member_tuples(ids, order, starts)
            messages.append(str(caught.value))
        assert messages[0] == messages[1]
