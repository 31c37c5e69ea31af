"""The direct JSONL line of a cluster is the general encoder's line, whatever the ids."""

from __future__ import annotations

import io
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.report import Cluster, write_clusters
from neardup.report.writers import _json_line

_ids = st.one_of(
    st.text(max_size=6),  # control characters, quotes, backslashes, non-ASCII, surrogates
    st.text(st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=6),
    st.integers(-5, 5),
)


@settings(max_examples=300)
@given(st.integers(0, 10), st.lists(_ids, max_size=6), _ids)
def test_cluster_line_equals_general_encoder(cid: int, members: list[object], rep: object) -> None:
    c = Cluster(cid, tuple(members), rep)  # type: ignore[arg-type]
    buf = io.StringIO()
    write_clusters([c], buf)
    assert buf.getvalue() == _json_line(c.to_dict())
    if all(isinstance(m, str) and m.isascii() and m.isprintable() for m in members):
        assert json.loads(buf.getvalue())["members"] == members


@settings(max_examples=50)
@given(st.lists(st.tuples(st.lists(_ids, max_size=4), _ids), max_size=2100))
def test_a_list_s_blocks_write_what_the_lines_write(
    rows: list[tuple[list[object], object]],
) -> None:
    """A list goes to the compiled kernel a block at a time (a block with a non-str id or a
    lone surrogate line by line): the same text as any other iterable of the clusters."""
    clusters = [Cluster(k, tuple(m), r) for k, (m, r) in enumerate(rows)]  # type: ignore[arg-type]
    whole, lines = io.StringIO(), io.StringIO()
    assert write_clusters(clusters, whole) == len(clusters)
    assert write_clusters(iter(clusters), lines) == len(clusters)
    assert whole.getvalue() == lines.getvalue()


def test_one_block_line_by_line_among_others() -> None:
    ids: list[object] = [f"d{k}" for k in range(2500)]
    ids[1500] = 7  # the second block goes line by line
    ids[2400] = "x\ud800"  # and the third
    clusters = [Cluster(k, (ids[k], 'b\t"é'), "b") for k in range(2500)]  # type: ignore[arg-type]
    whole = io.StringIO()
    assert write_clusters(clusters, whole) == 2500
    assert whole.getvalue() == "".join(_json_line(c.to_dict()) for c in clusters)
