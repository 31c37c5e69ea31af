"""TLSH: digests equal py-tlsh's, the numpy distance equals tlsh.diff, errors are clear."""

from __future__ import annotations

import random
import sys
from functools import cache

import numpy as np
import pytest
from fuzzy_corpus import machine_files
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.errors import FormatError, InputError, InputTooLargeError, MissingExtraError
from neardup.fuzzy import (
    TLSHError,
    TLSHParams,
    pack_tlsh,
    tlsh,
    tlsh_distance,
    tlsh_distances,
    tlsh_many,
)

pytlsh = pytest.importorskip("tlsh")


@cache
def digests() -> list[str]:
    out = [pytlsh.hash(d) for _, d in machine_files()]
    return [d for d in out if d != "TNULL"]


def test_digests_equal_py_tlsh() -> None:
    valid = 0
    for name, data in machine_files():
        expected = pytlsh.hash(data)
        if expected == "TNULL":
            with pytest.raises(TLSHError):
                tlsh(data)
            continue
        assert tlsh(data) == expected, name
        valid += 1
    assert valid > 150
    datas = [d for _, d in machine_files()]
    many = tlsh_many(datas, params=TLSHParams(invalid="none"))
    assert many == [None if pytlsh.hash(d) == "TNULL" else pytlsh.hash(d) for d in datas]


def test_distance_equals_tlsh_diff() -> None:
    rng = random.Random(5)
    for _ in range(2000):
        a, b = rng.choice(digests()), rng.choice(digests())
        assert tlsh_distance(a, b) == pytlsh.diff(a, b), (a, b)
        assert tlsh_distance(a, b, len_diff=False) == pytlsh.diffxlen(a, b), (a, b)
        assert tlsh_distance(b, a) == tlsh_distance(a, b)
    assert tlsh_distance(digests()[0], digests()[0]) == 0


def test_vectorised_distances_and_cutoff() -> None:
    packed = pack_tlsh(digests())
    for i in range(0, len(digests()), 17):
        exact = np.array([pytlsh.diff(digests()[i], d) for d in digests()])
        assert tlsh_distances(packed[i], packed).tolist() == exact.tolist()
        pruned = tlsh_distances(packed[i], packed, cutoff=120)
        keep = exact <= 120
        assert pruned[keep].tolist() == exact[keep].tolist()
        assert (pruned[~keep] == 121).all()


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=35, max_size=35), st.binary(min_size=35, max_size=35))
def test_distance_on_arbitrary_digests(a: bytes, b: bytes) -> None:
    ha, hb = "T1" + a.hex().upper(), "T1" + b.hex().upper()
    assert tlsh_distance(ha, hb) == pytlsh.diff(ha, hb)
    assert tlsh_distance(ha, hb, len_diff=False) == pytlsh.diffxlen(ha, hb)
    # the bare 70-digit form (no version prefix) and lower case are accepted too
    assert tlsh_distance(ha[2:].lower(), hb) == tlsh_distance(ha, hb)


def test_short_and_low_variance_inputs_raise_clear_errors() -> None:
    with pytest.raises(TLSHError, match="at least 50 bytes"):
        tlsh(b"x" * 49)
    with pytest.raises(TLSHError, match="variation"):
        tlsh(b"a" * 1000)
    with pytest.raises(TLSHError):
        tlsh_many([b"fine " * 0, b""])
    assert tlsh_many([b"", b"a" * 500], params=TLSHParams(invalid="none")) == [None, None]
    assert issubclass(TLSHError, InputError)


def test_other_bad_inputs() -> None:
    text = "".join(f"line {i} of some text é\n" for i in range(30))
    assert tlsh(text) == pytlsh.hash(text.encode("utf-8"))
    with pytest.raises(InputTooLargeError):
        tlsh(b"x" * 200, params=TLSHParams(max_bytes=100))
    with pytest.raises(InputError):
        tlsh(3.5)  # type: ignore[arg-type]
    with pytest.raises(InputError):
        tlsh("\udc80" * 100)


@pytest.mark.parametrize(
    "bad", ["TNULL", "", "T1", "T1" + "0" * 69, "T1" + "G" * 70, "T2" + "0" * 70, "T1" + "0" * 72]
)
def test_malformed_digests_raise_format_error(bad: str) -> None:
    good = "T1" + "12" * 35
    with pytest.raises(FormatError):
        tlsh_distance(bad, good)
    with pytest.raises(FormatError):
        tlsh_distance(good, bad)


def test_missing_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tlsh", None)
    with pytest.raises(MissingExtraError, match="neardup\\[fuzzy\\]"):
        tlsh(b"x" * 100)
    # distances need no extra
    assert tlsh_distance("T1" + "12" * 35, "T1" + "12" * 35) == 0
