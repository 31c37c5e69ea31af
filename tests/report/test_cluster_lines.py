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
