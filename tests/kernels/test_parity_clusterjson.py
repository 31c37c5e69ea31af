"""The native clusterjson family against its twin (the json module): the same text, or None."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from conftest import native_pair
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
