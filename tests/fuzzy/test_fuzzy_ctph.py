"""CTPH (ssdeep) digests and scores: against ppdeep, a literal libfuzzy port and the reference."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import numpy as np
import pytest
from fuzzy_corpus import edited_files, machine_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup._kernels import ctph as ctph_reference
from neardup._kernels.ctph import reference_digest
from neardup._kernels.engine import backend_name, pinned
from neardup.errors import (
    ConfigError,
    DecodeError,
    FormatError,
    InputError,
    InputTooLargeError,
    NeardupError,
)
from neardup.fuzzy import CTPHParams, ctph, ctph_compare, ctph_many, parse_ctph

ppdeep = pytest.importorskip("ppdeep")
# the package re-exports the function ctph, which hides the submodule attribute of that name
ctph_module = importlib.import_module("neardup.fuzzy.ctph")

# ---------------------------------------------------------------- a literal libfuzzy port
# fuzzy_compare of ssdeep 2.14.1 (fuzzy.c + edit_dist.c), transcribed line by line with the
# O(n*m) table and the rolling-hash substring filter, as an oracle for the fast scorer.


def _lf_eliminate(s: str) -> str:
    out: list[str] = []
    for ch in s:
        if len(out) >= 3 and ch == out[-1] == out[-2] == out[-3]:
            continue
        out.append(ch)
    return "".join(out)


def _lf_edit_distn(s1: str, s2: str) -> int:
    t1 = [i2 * 1 for i2 in range(len(s2) + 1)]
    for i1 in range(len(s1)):
        t2 = [(i1 + 1) * 1] + [0] * len(s2)
        for i2 in range(len(s2)):
            cost_a = t1[i2 + 1] + 1
            cost_d = t2[i2] + 1
            cost_r = t1[i2] + (0 if s1[i1] == s2[i2] else 2)
            t2[i2 + 1] = min(cost_a, cost_d, cost_r)
        t1 = t2
    return t1[len(s2)]


def _lf_roll_sums(s: str) -> list[int]:
    h1 = h2 = h3 = 0
    window = [0] * 7
    n = 0
    out = []
    for ch in s:
        c = ord(ch)
        h2 = (h2 - h1 + 7 * c) & 0xFFFFFFFF
        h1 = (h1 + c - window[n]) & 0xFFFFFFFF
        window[n] = c
        n = (n + 1) % 7
        h3 = ((h3 << 5) ^ c) & 0xFFFFFFFF
        out.append((h1 + h2 + h3) & 0xFFFFFFFF)
    return out


def _lf_has_common_substring(s1: str, s2: str) -> bool:
    if len(s1) < 7 or len(s2) < 7:
        return False
    hashes = _lf_roll_sums(s1)[6:]
    for j, h in enumerate(_lf_roll_sums(s2)[6:]):
        for i, g in enumerate(hashes):
            if g == h and s1[i : i + 7] == s2[j : j + 7]:
                return True
    return False


def _lf_score_strings(s1: str, s2: str, block_size: int) -> int:
    if len(s1) < 7 or len(s2) < 7:
        return 0
    if not _lf_has_common_substring(s1, s2):
        return 0
    score = _lf_edit_distn(s1, s2)
    score = (score * 64) // (len(s1) + len(s2))
    score = (100 * score) // 64
    score = 100 - score
    if block_size >= (99 + 7) // 7 * 3:
        return score
    return min(score, block_size // 3 * min(len(s1), len(s2)))


def libfuzzy_compare(a: str, b: str) -> int:
    bs1, a1, a2 = a.split(":")
    bs2, b1, b2 = b.split(":")
    block_size1, block_size2 = int(bs1), int(bs2)
    if (
        block_size1 != block_size2
        and block_size1 * 2 != block_size2
        and (block_size1 % 2 == 1 or block_size1 // 2 != block_size2)
    ):
        return 0
    s1b1, s1b2, s2b1, s2b2 = (_lf_eliminate(x) for x in (a1, a2, b1, b2))
    if block_size1 == block_size2 and s1b1 == s2b1 and s1b2 == s2b2:
        return 100
    if block_size1 == block_size2:
        return max(
            _lf_score_strings(s1b1, s2b1, block_size1),
            _lf_score_strings(s1b2, s2b2, block_size1 * 2),
        )
    if block_size1 * 2 == block_size2:
        return _lf_score_strings(s2b1, s1b2, block_size2)
    return _lf_score_strings(s1b1, s2b2, block_size1)


# ---------------------------------------------------------------- known values


def test_python_ssdeep_vectors() -> None:
    # python-ssdeep's own tests (libfuzzy underneath)
    a = ctph("Also called fuzzy hashes, Ctph can match inputs that have homologies.")
    b = ctph(b"Also called fuzzy hashes, CTPH can match inputs that have homologies.")
    assert a == "3:AXGBicFlgVNhBGcL6wCrFQEv:AXGHsNhxLsr2C"
    assert b == "3:AXGBicFlIHBGcL6wCrFQEv:AXGH6xLsr2C"
    assert ctph_compare(a, b) == 22
    assert ctph("") == "3::"


# ---------------------------------------------------------------- digests vs ppdeep


def test_digests_equal_ppdeep_on_machine_files() -> None:
    ours = ctph_many([data for _, data in machine_files()])
    assert len(ours) == len(machine_files())
    for (name, data), digest in zip(machine_files(), ours, strict=True):
        assert digest == ppdeep.hash(data), name
        assert ctph(data) == digest, name


def test_digests_equal_ppdeep_on_edited_copies() -> None:
    # every sixth edited copy (about 165): ppdeep is pure Python and slow
    sample = edited_files()[::6]
    edited = [e for _, _, e in sample]
    for (name, _, data), digest in zip(sample, ctph_many(edited), strict=True):
        assert digest == ppdeep.hash(data), name


def test_reference_backend_equals_fast() -> None:
    for name, data in machine_files():
        assert reference_digest(data) == ctph(data), name


def test_reference_kernels_equal_the_selected_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The numpy twin gives the digests of the kernels in use (the backend is chosen once per
    process, so the twin is called directly); an unknown backend name is refused."""
    sample = [d for _, d in machine_files()[:40]]
    lengths = [len(d) for d in sample]
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    buf = np.frombuffer(b"".join(sample), dtype=np.uint8)
    assert ctph_reference.digest_packed(buf, offsets) == ctph_many(sample)
    with pytest.raises(ConfigError, match="NEARDUP_BACKEND"), pinned("gpu"):
        backend_name()


def test_ctph_many_batches_across_buffers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    datas = [d for _, d in machine_files()[:60]]
    whole = ctph_many(datas)
    monkeypatch.setattr(ctph_module, "_BATCH_BYTES", 10_000)
    assert ctph_many(iter(datas)) == whole
    assert ctph_many([]) == []


def test_str_is_hashed_as_utf8() -> None:
    text = "naïve café — 漢字 " * 300
    assert ctph(text) == ctph(text.encode("utf-8")) == ppdeep.hash(text.encode("utf-8"))
    assert ctph(bytearray(b"abc" * 99)) == ctph(memoryview(b"abc" * 99)) == ctph(b"abc" * 99)


# ---------------------------------------------------------------- scores


def _score_pairs() -> list[tuple[str, str]]:
    originals = {name: ctph(data) for name, data in machine_files()}
    pairs = [(originals[name.split("#")[0]], ctph(edited)) for name, _, edited in edited_files()]
    digests = list(originals.values())
    # unrelated pairs too, including many with comparable block sizes
    pairs += [(digests[i], digests[(i * 7 + 3) % len(digests)]) for i in range(len(digests))]
    return pairs


def test_scores_equal_libfuzzy() -> None:
    pairs = _score_pairs()
    positive = 0
    for a, b in pairs:
        score = ctph_compare(a, b)
        assert score == libfuzzy_compare(a, b), (a, b)
        assert ctph_compare(b, a) == score
        positive += 0 < score < 100
    assert positive > 200  # the corpus really exercises the edit-distance scoring


def test_ppdeep_scoring_equals_ppdeep() -> None:
    differ = 0
    for a, b in _score_pairs():
        score = ctph_compare(a, b, scoring="ppdeep")
        assert score == ppdeep.compare(a, b), (a, b)
        differ += score != ctph_compare(a, b)
    # ppdeep's unit-cost Levenshtein departs from libfuzzy on some pairs; document it stays so
    assert differ > 0


def test_edited_copies_score_high() -> None:
    big = [(o, e) for _, o, e in edited_files() if len(o) > 20_000]
    scores = [ctph_compare(ctph(o), ctph(e)) for o, e in big]
    assert sum(s >= 50 for s in scores) >= 0.6 * len(scores)


def test_incompatible_block_sizes_score_zero() -> None:
    assert ctph_compare("3:ABCDEFGHIJ:ABCDEFGHIJ", "12:ABCDEFGHIJ:ABCDEFGHIJ") == 0
    assert ctph_compare("6:ABCDEFGHIJ:KLMNOPQRST", "3:xyz:ABCDEFGHIJ") > 0


def test_identical_rule_and_filename_suffix() -> None:
    assert ctph_compare("3:Hn:Hn", "3:Hn:Hn") == 100
    assert ctph_compare("3:Hn:Hn", '3:Hn:Hn,"/tmp/file"') == 100
    # runs longer than 3 are cut before comparing
    assert ctph_compare("3:AAAAAAAB:C", "3:AAAB:C") == 100
    assert parse_ctph("3:" + "A" * 65 + ":B").part1 == "AAA"  # libfuzzy limits after the cut
    # libfuzzy needs both parts equal; ppdeep only the first
    assert ctph_compare("3:Hn:Hn", "3:Hn:Ho") == 0
    assert ctph_compare("3:Hn:Hn", "3:Hn:Ho", scoring="ppdeep") == 100


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "3",
        "3:abc",
        "x:abc:def",
        "5:abc:def",
        "-3:abc:def",
        "3:ab$c:def",
        "3:abc:de:f",
        "3:" + "AB" * 33 + ":B",
        "6442450944:abc:def",
    ],
)
def test_malformed_digests_raise_format_error(bad: str) -> None:
    with pytest.raises(FormatError):
        ctph_compare(bad, "3:abc:def")
    with pytest.raises(FormatError):
        ctph_compare("3:abc:def", bad)


def test_non_string_digest_and_bad_scoring() -> None:
    with pytest.raises(FormatError):
        parse_ctph(b"3:abc:def")  # type: ignore[arg-type]
    with pytest.raises(InputError):
        ctph_compare("3:a:b", "3:a:b", scoring="tlsh")  # type: ignore[arg-type]


def test_bad_inputs() -> None:
    with pytest.raises(InputTooLargeError, match="max_bytes"):
        ctph(b"x" * 101, params=CTPHParams(max_bytes=100))
    with pytest.raises(InputTooLargeError):
        ctph_many([b"ok", "y" * 101], params=CTPHParams(max_bytes=100))
    assert ctph(b"x" * 100, params=CTPHParams(max_bytes=100)) == ppdeep.hash(b"x" * 100)
    with pytest.raises(DecodeError):
        ctph("lone \ud800 surrogate")
    with pytest.raises(InputError):
        ctph(12345)  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        CTPHParams(max_bytes=1 << 40)
    with pytest.raises(NeardupError):
        CTPHParams(max_bytes=-1)


def test_params_fingerprint_is_stable() -> None:
    assert CTPHParams().fingerprint() == CTPHParams(max_bytes=1 << 30).fingerprint()
    assert CTPHParams().fingerprint() != CTPHParams(max_bytes=10).fingerprint()


def test_import_compiles_nothing() -> None:
    code = (
        "import sys, neardup, neardup.fuzzy, neardup.compat.fuzzysum\n"
        "assert 'numba' not in sys.modules, 'numba imported'\n"
        "assert 'tlsh' not in sys.modules, 'tlsh imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ})


# ---------------------------------------------------------------- properties

_BYTES = st.one_of(
    st.binary(max_size=3000),
    # structured data with repeats, runs and zero tails: hits every branch of the digest
    st.lists(
        st.sampled_from([b"\0" * 9, b"abc", b"hello world ", b"\xff\xfe", b"The quick fox\n"]),
        max_size=400,
    ).map(b"".join),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_BYTES)
def test_fast_equals_reference_and_ppdeep(data: bytes) -> None:
    digest = ctph(data)
    assert digest == reference_digest(data) == ppdeep.hash(data)
    assert ctph(data) == digest  # deterministic
    assert ctph_compare(digest, digest) == 100


@settings(max_examples=150, deadline=None)
@given(_BYTES, _BYTES)
def test_compare_symmetric_and_bounded(a: bytes, b: bytes) -> None:
    da, db = ctph(a), ctph(b)
    score = ctph_compare(da, db)
    assert 0 <= score <= 100
    assert score == ctph_compare(db, da) == libfuzzy_compare(da, db)


_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ABCDab", max_size=64), st.text(alphabet="ABCDab", max_size=64))
def test_bit_parallel_distances_equal_tables(s1: str, s2: str) -> None:
    assert ctph_reference._indel_distance(s1, s2) == _lf_edit_distn(s1, s2)
    # unit-cost Levenshtein, as ppdeep computes it
    assert ctph_reference._levenshtein(s1, s2) == ppdeep._levenshtein(s1, s2)


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=_B64[:6], min_size=7, max_size=40),
    st.text(alphabet=_B64[:6], min_size=7, max_size=40),
    st.sampled_from([3, 6, 12, 48, 96]),
)
def test_synthetic_digests_score_like_libfuzzy(p1: str, p2: str, block_size: int) -> None:
    a = f"{block_size}:{p1}:{p2}"
    b = f"{block_size}:{p2}:{p1[::-1]}"
    c = f"{block_size * 2}:{p2}:{p1}"
    for x, y in ((a, b), (a, c), (c, a)):
        assert ctph_compare(x, y) == libfuzzy_compare(x, y)
