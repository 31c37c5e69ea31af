"""Tokenizers: Go vectors token for token, txtfp behaviours, properties, bad input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import load_vectors
from neardup import GraphemeTokenizer, NgramTokenizer, ShingleTokenizer, WordTokenizer
from neardup._kernels import engine
from neardup.errors import ConfigError, DecodeError, InputError

GO = load_vectors("go_fingerprint_text.json")


@pytest.mark.parametrize("case", GO["cases"], ids=lambda c: c["id"])
def test_go_tokens_match_vectors(case: dict[str, object]) -> None:
    text = bytes.fromhex(str(case["utf8_hex"])).decode("utf-8", "replace")
    tokens = WordTokenizer(mode="go").tokenize(text)
    assert len(tokens) == case["token_count"]
    assert tokens[: len(case["tokens"])] == case["tokens"]  # type: ignore[arg-type]


@pytest.mark.parametrize("case", GO["cases"], ids=lambda c: c["id"])
def test_go_shingles_match_vectors(case: dict[str, object]) -> None:
    text = bytes.fromhex(str(case["utf8_hex"])).decode("utf-8", "replace")
    tok = ShingleTokenizer(3, WordTokenizer(mode="go"), short="separate")
    features = tok.tokenize(text)
    assert len(features) == case["feature_count"]
    assert features[: len(case["features"])] == case["features"]  # type: ignore[arg-type]


def test_go_rules() -> None:
    go = WordTokenizer(mode="go")
    assert go.tokenize("a b cd é 中") == ["cd", "é", "中"]
    assert go.tokenize("İ ΣΣ") == ["σσ"]  # İ -> i is one byte, dropped
    assert go.tokenize("don't x_y e\u0301t") == ["don"]


def test_word_mode_keeps_marks_and_underscore() -> None:
    assert WordTokenizer().tokenize("x_y e\u0301t A") == ["x_y", "e\u0301t", "a"]


def test_uax29_words() -> None:
    assert WordTokenizer("uax29").tokenize("v1.2 and 3.14, 中文!") == [
        "v1.2",
        "and",
        "3.14",
        "中",
        "文",
    ]


def test_shingles_short_rules() -> None:
    assert ShingleTokenizer(5).tokenize("one two") == ["one two"]
    assert ShingleTokenizer(5, short="separate").tokenize("one two") == ["one", "two"]
    assert ShingleTokenizer(2).tokenize("") == []
    assert ShingleTokenizer(2).name == "shingle-k=2/word-unicode"


def test_ngrams_and_graphemes() -> None:
    assert NgramTokenizer(2).tokenize("aé b") == ["aé", "é ", " b"]
    assert NgramTokenizer(2).tokenize("") == []
    family = "👨\u200d👩\u200d👧"
    assert GraphemeTokenizer().tokenize(f"{family}x") == [family, "x"]


def test_batch_equals_single() -> None:
    texts = ["Hello, World", "", "naïve café", "x", "one two three four"]
    for tok in (
        WordTokenizer("go"),
        WordTokenizer(),
        WordTokenizer("uax29"),
        NgramTokenizer(3),
        GraphemeTokenizer(),
        ShingleTokenizer(2),
    ):
        assert tok.spans(texts).to_lists() == [tok.tokenize(t) for t in texts]


unicode_text = st.text(
    alphabet=st.characters(codec=None, exclude_categories=()), max_size=80
) | st.sampled_from(
    ["\ud800abc", "e\u0301\u0301", "\u202eRTL\u202c", "👩\u200d👩\u200d👦", "a\x00b", "שָׁלוֹם"]
)


@given(unicode_text)
def test_tokenizers_never_raise_on_unicode(text: str) -> None:
    for tok in (
        WordTokenizer("go"),
        WordTokenizer(),
        WordTokenizer("uax29"),
        NgramTokenizer(3),
        GraphemeTokenizer(),
        ShingleTokenizer(3),
    ):
        assert all(isinstance(t, str) for t in tok.tokenize(text))


def test_bad_input() -> None:
    with pytest.raises(DecodeError, match="UTF-8"):
        WordTokenizer().spans([b"\xff\xfe"])
    with pytest.raises(InputError):
        WordTokenizer().spans([None])  # type: ignore[list-item]
    with pytest.raises(ConfigError):
        WordTokenizer("nope")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        NgramTokenizer(0)
    with pytest.raises(ConfigError):
        ShingleTokenizer(0)


# ---------------------------------------------------------------- Han and kana


def test_han_and_kana_are_words_of_their_own() -> None:
    tok = WordTokenizer()
    assert tok.tokenize("我们在北京abc") == ["我", "们", "在", "北", "京", "abc"]
    assert tok.tokenize("カタカナ、ひらがな。") == ["カ", "タ", "カ", "ナ", "ひ", "ら", "が", "な"]
    # a combining mark stays with its character; Hangul and Latin keep their runs
    assert tok.tokenize("か\u3099x 한국어 naïve") == ["か\u3099", "x", "한국어", "naïve"]
    assert tok.tokenize("ab中cd") == ["ab", "中", "cd"]
    assert WordTokenizer(split_ideographs=False).tokenize("ab中文cd") == ["ab中文cd"]
    assert WordTokenizer("go").tokenize("ab中文cd") == ["ab中文cd"]
    assert WordTokenizer().name == "word-unicode"
    assert WordTokenizer(split_ideographs=False).name == "word-unicode-runs"


CJK_MIXED = st.text(
    st.one_of(
        st.sampled_from("中文字日本語東京ひらがなカタカナーｶﾞ々〇\u3099\u0301 ab.Z9_한국、"),
        st.characters(exclude_categories=("Cs",)),
    ),
    max_size=40,
)


@settings(max_examples=40)
@given(st.lists(CJK_MIXED, min_size=1, max_size=5))
def test_word_kernels_fast_equal_reference_on_cjk(docs: list[str]) -> None:

    from neardup import MinHasher, SimHasher

    def run() -> tuple[object, ...]:
        return (
            WordTokenizer().spans(docs).to_lists(),
            WordTokenizer(split_ideographs=False).spans(docs).to_lists(),
            ShingleTokenizer(2).spans(docs).to_lists(),
            MinHasher(16).sketch_many(docs).tolist(),
            SimHasher().sketch_many(docs).tolist(),
        )

    with engine.pinned("native"):
        fast = run()
    with engine.pinned("reference"):
        ref = run()
    assert fast == ref
    # one-shot tokenize agrees with the batch path
    assert [WordTokenizer().tokenize(d) for d in docs] == fast[0]
