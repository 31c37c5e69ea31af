"""The line-span kernel: numba and numpy reference give the same spans."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup._kernels.lines import fast, reference
from neardup._kernels.spans import pack

TEXT = st.text(alphabet=st.sampled_from(["a", " ", "\n", "\t", "é", "\r", "x"]), max_size=30)


@settings(max_examples=150, deadline=None)
@given(st.lists(TEXT, max_size=8))
def test_fast_equals_reference(texts: list[str]) -> None:
    p = pack(texts)
    want = reference.line_spans(p.buf, p.offsets)
    n_lines = int(np.count_nonzero(p.buf == 10)) + len(texts)
    got = fast.line_spans(p.buf, p.offsets, n_lines)
    for g, w in zip(got, want, strict=True):
        assert g.tolist() == w.tolist()
    # every line is its text's split at \n, and the trimmed span is its strip()
    raw = p.buf.tobytes()
    lines = [raw[a:b] for a, b in zip(want[0], want[1], strict=True)]
    assert lines == [x.encode() for t in texts for x in t.split("\n")]
    trimmed = [raw[a:b] for a, b in zip(want[2], want[3], strict=True)]
    assert trimmed == [x.encode().strip(b" \t\n\x0b\x0c\r") for t in texts for x in t.split("\n")]
