"""neardup.compat.fuzzysum equals the seed's Java FuzzySum bit for bit (vectors of a Java run)."""

from __future__ import annotations

import hashlib
import locale

import pytest

from conftest import load_vectors
from neardup.compat.fuzzysum import get_sums, is_similar
from neardup.errors import DecodeError, FormatError, InputError, InputTooLargeError
from neardup.fuzzy.fuzzysum import legacy_fuzzysum, legacy_preimages

VECTORS = load_vectors("fuzzysum_java_vectors.json")
CASES = {case["id"]: case for case in VECTORS["cases"]}
MD5_EMPTY = hashlib.md5(b"").hexdigest()


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_sums_and_preimages_match_java(case_id: str) -> None:
    case = CASES[case_id]
    assert get_sums(case["text"]) == (case["sum1"], case["sum2"])
    pre = legacy_preimages(case["text"])
    if len(case["md5_preimages"]) == 1:
        assert pre == case["md5_preimages"]
    else:
        assert pre == case["md5_preimages"]
        assert [hashlib.md5(p.encode()).hexdigest() for p in pre] == [case["sum1"], case["sum2"]]


@pytest.mark.parametrize("pair", VECTORS["pairs"], ids=lambda p: f"{p['a']}-{p['b']}")
def test_pairs_match_java(pair: dict[str, object]) -> None:
    a, b = CASES[str(pair["a"])], CASES[str(pair["b"])]
    assert is_similar(get_sums(a["text"]), get_sums(b["text"])) is pair["similar"]


def test_locale_independent_en_us_result() -> None:
    # the vectors were made in en-US; the Turkish-locale run differs, we must not
    for differing in VECTORS["turkish_locale_run"]["differing_cases"]:
        case = CASES[differing["id"]]
        ours = get_sums(case["text"])
        assert ours == (case["sum1"], case["sum2"])
        assert ours != (differing["sum1"], differing["sum2"])
    saved = locale.setlocale(locale.LC_ALL)
    try:
        locale.setlocale(locale.LC_ALL, "tr_TR.UTF-8")
    except locale.Error:
        return  # no Turkish locale installed: Python's str.lower ignores locales anyway
    try:
        case = CASES["prose_upper"]
        assert get_sums(case["text"]) == (case["sum1"], case["sum2"])
    finally:
        locale.setlocale(locale.LC_ALL, saved)


def test_quirks_are_kept() -> None:
    # six words (>= 15 characters) hash to md5("") twice, so all such texts are "similar"
    assert get_sums("alpha bravo charlie delta echo foxtrot") == (MD5_EMPTY, MD5_EMPTY)
    # non-ASCII is deleted and glues neighbours; tags are removed without a space
    assert legacy_preimages("one\u00a0two") == ["onetwo"]
    assert legacy_preimages("a<br>b") == ["ab"]
    # a tail with no closed window starts with a newline
    assert legacy_preimages(CASES["eleven_words"]["text"])[0].startswith("\n")
    # the Kelvin sign and dotted capital I lower-case into ASCII, as in Java's root locale
    assert legacy_preimages("\u212aelvin \u0130zmir") == ["kelvin izmir"]


def test_word_inserted_at_front_breaks_all_four_comparisons() -> None:
    base = get_sums(CASES["prose_punct_changed"]["text"])
    assert base == get_sums(CASES["prose_typo"]["text"])
    inserted = get_sums(CASES["prose_word_inserted_front"]["text"])
    assert not is_similar(base, inserted)


def test_bad_input() -> None:
    with pytest.raises(FormatError):
        is_similar(("abc", "def"), get_sums(""))  # type: ignore[arg-type]
    with pytest.raises(FormatError):
        is_similar(get_sums(""), (MD5_EMPTY,))  # type: ignore[arg-type]
    with pytest.raises(DecodeError):
        get_sums(b"\xff\xfe not utf-8")  # type: ignore[arg-type]
    assert get_sums(b"<p>Hello <b>World</b></p>") == get_sums("<p>Hello <b>World</b></p>")  # type: ignore[arg-type]
    with pytest.raises(InputError):
        get_sums(None)  # type: ignore[arg-type]
    with pytest.raises(InputTooLargeError):
        legacy_fuzzysum("word " * 100, max_chars=100)
    # upper-case hex from another tool compares equal
    upper = tuple(s.upper() for s in get_sums("x"))
    assert is_similar(upper, get_sums("x"))  # type: ignore[arg-type]
