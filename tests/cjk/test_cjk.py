"""neardup.cjk: dictionary tokenizers (extra cjk) and the core character-bigram fallback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from neardup import cjk
from neardup.cjk import (
    ChineseTokenizer,
    CjkBigramTokenizer,
    JapaneseTokenizer,
    KoreanTokenizer,
    auto_cjk_tokenizer,
)
from neardup.errors import ConfigError, DecodeError
from neardup.tokenize import ShingleTokenizer, WordTokenizer, token_spans
from neardup.types import Tokenizer

# Two news-style paragraphs that differ by one phrase, and an unrelated one.
NEWS_A = (
    "新华社北京3月5日电 国务院总理今天在人民大会堂作政府工作报告。报告指出，"
    "过去一年我国经济保持平稳增长，城镇新增就业一千二百万人，居民收入稳步提高。"
    "今年将继续扩大内需，推动科技创新，加强生态环境保护，促进区域协调发展。"
)
NEWS_B = NEWS_A.replace("推动科技创新", "加快发展现代服务业")
NEWS_C = (
    "本周末全市将迎来大范围降雨天气，气象台提醒市民出行注意安全。"
    "郊区部分路段可能出现积水，学校春游活动已经推迟到下个月举行。"
)


def jaccard(tokenizer: Tokenizer, a: str, b: str) -> float:
    """Exact Jaccard similarity of the token sets, through the sketchers' batch path."""
    sa, sb = (set(tokens) for tokens in token_spans(tokenizer, [a, b]).to_lists())
    return len(sa & sb) / len(sa | sb)


def test_word_tokenizer_splits_chinese() -> None:
    # The default word tokenizer makes each ideograph a word; keeping runs whole makes a
    # clause one token, so one changed phrase kills the whole clause.
    runs = WordTokenizer(split_ideographs=False)
    assert len(runs.tokenize(NEWS_A)) < 15
    assert WordTokenizer().tokenize(NEWS_A)[:3] == ["新", "华", "社"]
    assert jaccard(CjkBigramTokenizer(), NEWS_A, NEWS_B) > jaccard(runs, NEWS_A, NEWS_B)
    split = ShingleTokenizer(3, WordTokenizer())
    assert jaccard(split, NEWS_A, NEWS_B) >= 0.75 > 0.1 >= jaccard(split, NEWS_A, NEWS_C)


def test_bigrams_rules() -> None:
    tok = CjkBigramTokenizer()
    assert tok.tokenize("中文") == ["中文"]
    assert tok.tokenize("中") == ["中"]
    assert tok.tokenize("abc中文字def") == ["abc", "中文", "文字", "def"]
    assert tok.tokenize("コーヒーを飲む") == ["コー", "ーヒ", "ヒー", "ーを", "を飲", "飲む"]
    assert tok.tokenize("한국어 문장, Hello World!") == ["한국", "국어", "문장", "hello", "world"]
    assert tok.tokenize("") == [] and tok.tokenize("。、！") == []
    assert tok.name == "cjk-bigram" and isinstance(tok, Tokenizer)


@pytest.mark.parametrize("k", [1, 3])
def test_fallback_near_duplicates(k: int) -> None:
    tok = ShingleTokenizer(k, CjkBigramTokenizer())
    assert jaccard(tok, NEWS_A, NEWS_B) >= 0.75
    assert jaccard(tok, NEWS_A, NEWS_C) <= 0.1
    assert jaccard(tok, NEWS_A, NEWS_A) == 1.0


def test_auto_without_the_extra_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in ("jieba", "sudachipy", "sudachidict_core", "kiwipiepy"):
        monkeypatch.setitem(sys.modules, module, None)  # as if not installed
    for lang in (None, "zh", "ja", "ko"):
        tok = auto_cjk_tokenizer(lang)
        assert isinstance(tok, CjkBigramTokenizer)
    tok = auto_cjk_tokenizer()
    assert jaccard(tok, NEWS_A, NEWS_B) >= 0.75 and jaccard(tok, NEWS_A, NEWS_C) <= 0.1
    with pytest.raises(ConfigError, match="unknown CJK language"):
        auto_cjk_tokenizer("fr")  # type: ignore[arg-type]


def test_fallback_in_a_core_only_interpreter() -> None:
    code = (
        "import sys\n"
        "for m in ('jieba', 'sudachipy', 'sudachidict_core', 'kiwipiepy'): sys.modules[m] = None\n"
        "from neardup.cjk import auto_cjk_tokenizer\n"
        "print(auto_cjk_tokenizer('ko').tokenize('대한민국'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['대한', '한민', '민국']"


def test_import_does_not_load_the_extras() -> None:
    code = (
        "import sys, neardup, neardup.cjk\n"
        "print([m for m in ('jieba', 'sudachipy', 'kiwipiepy', 'regex') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_undecodable_bytes() -> None:
    for tok in (CjkBigramTokenizer(), ChineseTokenizer()):
        with pytest.raises(DecodeError, match="not valid UTF-8"):
            tok.tokenize(b"\xe4\xb8")  # type: ignore[arg-type]
        with pytest.raises(DecodeError, match="document 1"):
            tok.spans(["ok", b"\xff\xfe"])
        assert tok.spans(["中文".encode()]).to_lists() == [tok.tokenize("中文")]


# ---------------------------------------------------------------- with the extra


def test_chinese_near_duplicates() -> None:
    pytest.importorskip("jieba")
    tok = ChineseTokenizer()
    words = tok.tokenize(NEWS_A)
    assert "人民大会堂" in words and "，" in words and " " not in words
    assert tok.name == "cjk-jieba" and ChineseTokenizer(hmm=True).name == "cjk-jieba-hmm"
    assert isinstance(tok, Tokenizer) and isinstance(auto_cjk_tokenizer("zh"), ChineseTokenizer)
    for k in (1, 3):
        shingles = ShingleTokenizer(k, tok)
        assert jaccard(shingles, NEWS_A, NEWS_B) >= 0.75
        assert jaccard(shingles, NEWS_A, NEWS_C) <= 0.1
    assert token_spans(tok, [NEWS_A, ""]).to_lists() == [words, []]


def test_models_are_built_once() -> None:
    pytest.importorskip("jieba")
    ChineseTokenizer().tokenize("中文")
    model = cjk._MODELS[("jieba",)]
    ChineseTokenizer(hmm=True).tokenize("中文")
    assert cjk._MODELS[("jieba",)] is model


def test_japanese_smoke() -> None:
    pytest.importorskip("sudachipy")
    pytest.importorskip("sudachidict_core")
    tok = JapaneseTokenizer()
    assert isinstance(auto_cjk_tokenizer("ja"), JapaneseTokenizer)
    assert tok.tokenize("東京都に住んでいます。 Hello") == [
        "東京都", "に", "住ん", "で", "い", "ます", "。", "Hello",
    ]  # fmt: skip
    assert "東京" in JapaneseTokenizer(mode="A").tokenize("東京都に住んでいます。")
    a = "今日は東京で新しい美術館の開館式が行われ、多くの市民が訪れました。"
    b = a.replace("多くの市民", "大勢の観光客")
    assert jaccard(tok, a, b) >= 0.6 > jaccard(tok, a, NEWS_C)
    long_text = "吾輩は猫である。名前はまだ無い。\n" * 3000  # over Sudachi's 49149-byte limit
    assert len(long_text.encode()) > 49149
    assert tok.tokenize(long_text)[:3] == ["吾輩", "は", "猫"]
    with pytest.raises(ConfigError):
        JapaneseTokenizer(mode="D")  # type: ignore[arg-type]


def test_korean_smoke() -> None:
    pytest.importorskip("kiwipiepy")
    tok = KoreanTokenizer()
    assert isinstance(auto_cjk_tokenizer("ko"), KoreanTokenizer) and tok.name == "cjk-kiwi"
    words = tok.tokenize("저는 학생입니다. 서울에 살아요.")
    assert "학생" in words and "서울" in words and " " not in words
    a = "정부는 오늘 내년도 예산안을 발표하고 일자리 창출에 집중하겠다고 밝혔습니다."
    b = a.replace("일자리 창출에", "저출산 대응에")
    assert jaccard(tok, a, b) >= 0.6 > jaccard(tok, a, "주말에는 전국에 비가 내리겠습니다.")


def test_pieces_under_limit() -> None:
    text = "あ。" * 10 + "い" * 30
    pieces = cjk._pieces_under(text, 24)
    assert "".join(pieces) == text
    assert all(len(p.encode()) <= 24 for p in pieces)
    assert pieces[0].endswith("。")
