"""The native idset family against its twin: the same answers, calls and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import native_pair
from neardup.errors import ConfigError

# small alphabets, so that batches repeat ids; lone surrogates included
ids = st.text(alphabet=st.sampled_from(["a", "b", "é", "\ud800", "\U0001f600"]), max_size=3)


@given(st.lists(st.lists(ids, max_size=8), max_size=6), st.booleans())
def test_batches_of_ids(batches: list[list[str]], as_tuple: bool) -> None:
    native, reference = native_pair("idset")
    mine, theirs = native.IdSet(), reference.IdSet()
    added: set[str] = set()  # what the sets hold (no hash collision among these ids)
    for batch in batches:
        arg: Any = tuple(batch) if as_tuple else batch
        got, want = mine.add(arg), theirs.add(list(batch))
        assert got == want
        kept = batch if want < 0 else batch[:want]
        assert len(set(kept)) == len(kept) and added.isdisjoint(kept)
        if want >= 0:  # the first repeat: seen in an earlier batch or earlier in this one
            assert batch[want] in added or batch[want] in kept
        added.update(kept)
        assert len(mine) == len(theirs) == len(added)


@pytest.mark.parametrize("bad", [[1], ["a", None], [b"a"]])
def test_the_same_errors(bad: list[Any]) -> None:
    native, reference = native_pair("idset")
    errors = []
    for module in (native, reference):
        with pytest.raises(ConfigError) as caught:
            module.IdSet().add(bad)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


def test_a_repeat_across_calls_and_within_one() -> None:
    native, _ = native_pair("idset")
    s = native.IdSet()
    assert s.add(["x", "y"]) == -1
    assert s.add(["z", "x"]) == 1
    assert s.add(iter(["w", "v", "w"])) == 2
    assert len(s) == 5


@given(st.lists(st.lists(ids, max_size=8), max_size=6))
def test_hashes_made_apart_then_added(batches: list[list[str]]) -> None:
    """``hash_ids`` on one thread, ``add_hashes`` on another: the hashes and answers of
    ``add``, on both backends."""
    native, reference = native_pair("idset")
    mine, theirs, whole = native.IdSet(), reference.IdSet(), native.IdSet()
    for batch in batches:
        h = native.hash_ids(batch)
        assert h.dtype == np.uint64 and h.tolist() == reference.hash_ids(iter(batch)).tolist()
        want = whole.add(batch)
        assert mine.add_hashes(h) == theirs.add_hashes(h) == want
        assert len(mine) == len(theirs) == len(whole)


def test_hash_ids_the_same_errors() -> None:
    native, reference = native_pair("idset")
    errors = []
    for module in (native, reference):
        with pytest.raises(ConfigError) as caught:
            module.hash_ids(["a", 3])
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


@given(st.lists(ids, max_size=8))
def test_packed_ids_hash_as_their_strings(batch: list[str]) -> None:
    native, reference = native_pair("idset")
    raw = [d.encode("utf-8", "surrogatepass") for d in batch]
    buf = np.frombuffer(b"".join(raw), np.uint8)
    offsets = np.cumsum([0] + [len(r) for r in raw]).astype(np.int64)
    got = native.hash_packed_ids(buf, offsets)
    assert got.dtype == np.uint64
    assert got.tolist() == reference.hash_packed_ids(buf, offsets).tolist()
    assert got.tolist() == native.hash_ids(batch).tolist()


@pytest.mark.parametrize("offsets", [[], [-1, 0], [0, 2, 1], [0, 9]])
def test_packed_ids_errors(offsets: list[int]) -> None:
    native, reference = native_pair("idset")
    buf = np.frombuffer(b"abc", np.uint8)
    errors = []
    for module in (native, reference):
        with pytest.raises(ConfigError) as caught:
            module.hash_packed_ids(buf, np.array(offsets, np.int64))
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
