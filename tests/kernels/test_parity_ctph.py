"""The native ctph family agrees with its reference: digests (the libfuzzy engine against the
classic spamsum procedure), rolling sums, scores, and ``CTPHTable`` answers."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import native_pair

native, reference = native_pair("ctph")

_BYTES = st.one_of(
    st.binary(max_size=3000),
    st.lists(
        st.sampled_from([b"\0" * 9, b"abc", b"hello world ", b"\xff\xfe", b"The quick fox\n"]),
        max_size=500,
    ).map(b"".join),
)


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_BYTES, max_size=5))
def test_digests_and_rolling_sums_match_reference(datas: list[bytes]) -> None:
    offsets = np.concatenate(([0], np.cumsum([len(d) for d in datas]))).astype(np.int64)
    buf = np.frombuffer(b"".join(datas), dtype=np.uint8)
    got = native.digest_packed(buf, offsets)
    assert isinstance(got, list)
    assert got == reference.digest_packed(buf, offsets)
    for d in datas:
        assert native.reference_digest(d) == reference.reference_digest(d)
        sums, want = native.rolling_sums(d), reference.rolling_sums(d)
        assert sums.dtype == want.dtype == np.uint32 and np.array_equal(sums, want)
    assert native.B64 == reference.B64


_ALPHABET = "ABCDab+/"
_part = st.text(alphabet=_ALPHABET, max_size=70)
_digest = st.one_of(
    st.builds(
        lambda bs, p1, p2, tail: f"{bs}:{p1}:{p2}{tail}",
        st.sampled_from([3, 6, 12, 24, 48, 96, 3 << 30, 5, 0, 6 << 30]),
        _part,
        _part,
        st.sampled_from(["", ',"file"', ",\ud800", ":x", "$"]),
    ),
    st.text(max_size=20),
)


@settings(max_examples=400)
@given(_digest, _digest, st.booleans())
def test_compare_matches_reference(a: str, b: str, ppdeep: bool) -> None:
    got = native.compare(a, b, ppdeep)
    assert got == reference.compare(a, b, ppdeep)
    assert got == native.compare(b, a, ppdeep)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_digest, max_size=40), st.booleans(), st.integers(1, 100))
def test_table_matches_reference(digests: list[str], ppdeep: bool, min_score: int) -> None:
    tables = [native.CTPHTable(ppdeep), reference.CTPHTable(ppdeep)]
    ids = [[t.add(d) for d in digests] for t in tables]
    assert ids[0] == ids[1]
    assert len(tables[0]) == len(tables[1])
    assert tables[0].digests() == tables[1].digests()
    for q in [*digests[:10], "3:ABCDabAB:ab", "nope"]:
        assert tables[0].query(q, min_score) == tables[1].query(q, min_score)
    got, want = tables[0].pairs(min_score), tables[1].pairs(min_score)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype == np.int64 and np.array_equal(g, w)
    more = [native.CTPHTable(ppdeep), reference.CTPHTable(ppdeep)]
    assert more[0].add_many(digests) == more[1].add_many(digests)
    assert more[0].digests() == more[1].digests()


def test_native_names_are_the_reference_names() -> None:
    assert sorted(reference.__all__) == sorted(n for n in dir(native) if not n.startswith("_"))


def _edited_texts(seed: int, n: int) -> list[bytes]:
    """Texts of 1-20 KB and copies of them with a few words changed (pairs that score)."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(500)]
    out: list[bytes] = []
    for i in range(n):
        if out and i % 2:
            doc = out[int(rng.integers(len(out)))].split()
            for k in rng.integers(0, len(doc), size=3):
                doc[int(k)] = b"edit"
            out.append(b" ".join(doc))
        else:
            size = int(rng.integers(200, 4000))
            out.append(" ".join(words[int(k)] for k in rng.integers(0, 500, size)).encode())
    return out


def test_scores_of_real_digests_match_reference() -> None:
    texts = _edited_texts(4, 40)
    offsets = np.concatenate(([0], np.cumsum([len(t) for t in texts]))).astype(np.int64)
    digests = native.digest_packed(np.frombuffer(b"".join(texts), dtype=np.uint8), offsets)
    scored = 0
    for ppdeep in (False, True):
        for a in digests:
            for b in digests:
                got = native.compare(a, b, ppdeep)
                assert got == reference.compare(a, b, ppdeep)
                scored += 0 < got < 100
        tables = [native.CTPHTable(ppdeep), reference.CTPHTable(ppdeep)]
        for t in tables:
            t.add_many(digests)
        for g, w in zip(tables[0].pairs(1), tables[1].pairs(1), strict=True):
            assert np.array_equal(g, w)
        assert tables[0].query(digests[3], 1) == tables[1].query(digests[3], 1)
    assert scored > 20
