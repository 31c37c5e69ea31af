"""StaticProvider: model2vec-format loading, pooling kernels, word cache, parity with model2vec."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup._kernels import pooling as pooling_reference
from neardup.embeddings import _pooling as pooling
from neardup.errors import ConfigError, FormatError

tokenizers = pytest.importorskip("tokenizers")
safetensors_numpy = pytest.importorskip("safetensors.numpy")

from static_models import WORDS, _tiny_model  # noqa: E402

from neardup.embeddings import StaticProvider  # noqa: E402
from neardup.embeddings.static import default_static_model_path  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny_model(tmp_path_factory.mktemp("m2v") / "tiny")


TEXT = st.lists(
    st.one_of(
        st.sampled_from([*WORDS, "Cats", "Naïve", "café", "東京", "zzz", "[UNK]", "dogs!"]),
        st.sampled_from(
            [" ", "  ", "\n", "\t", ",", ".", "\x0b", "\x85", "\x1f", "\u3000", "\u200b"]
        ),
    ),
    max_size=30,
).map("".join)


@settings(max_examples=30, deadline=None)
@given(st.lists(TEXT, max_size=6))
def test_word_cache_gives_the_tokenizers_ids(tiny: Path, texts: list[str]) -> None:
    p = StaticProvider(tiny, max_length=12)
    ids, off = p.token_ids(texts)
    whole_ids, whole_off = p.token_ids(texts, word_cache=False)
    assert ids.tolist() == whole_ids.tolist()
    assert off.tolist() == whole_off.tolist()


def test_word_cache_on_the_default_model() -> None:
    p = StaticProvider()
    texts = [
        "The Quick-Brown fox; jumped (over) the lazy dog's back!",
        "naïve CAFÉ au lait, 東京 and Zürich\x0bnext\x85line\x1fend",
        "",
        "   ",
        "supercalifragilisticexpialidocious " * 3,
        "x" * 150 + " tail",
        "emoji 🙂 and tabs\tand\u2028separators\u3000wide",
    ]
    for _ in range(2):  # cold, then warm cache
        ids, off = p.token_ids(texts)
        whole_ids, whole_off = p.token_ids(texts, word_cache=False)
        assert ids.tolist() == whole_ids.tolist()
        assert off.tolist() == whole_off.tolist()


def test_matches_model2vec(tmp_path: Path) -> None:
    model2vec = pytest.importorskip("model2vec")
    texts = ["the cat sat", "Dogs ran far, far!", "", "zzz qqq", "東京 café naïve", "tax " * 40]
    for k, (w, m) in enumerate([(False, False), (True, False), (True, True)]):
        folder = _tiny_model(tmp_path / f"m{k}", weights=w, mapping=m, seed=k, max_length=16)
        ours = StaticProvider(folder).embed(texts)
        theirs = model2vec.StaticModel.from_pretrained(str(folder)).encode(texts)
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-5)


def test_default_model_loads_in_model2vec_too() -> None:
    model2vec = pytest.importorskip("model2vec")
    p = StaticProvider()
    assert p.model_path == default_static_model_path()
    texts = ["A cat sat on the mat.", "Quarterly revenue grew by twelve percent."]
    theirs = model2vec.StaticModel.from_pretrained(str(p.model_path)).encode(texts)
    np.testing.assert_allclose(p.embed(texts), theirs, rtol=0, atol=2e-3)  # theirs is float16


def test_default_model_ranks_a_paraphrase_first() -> None:
    p = StaticProvider()
    assert p.dimension == 256
    assert p.model_id.startswith("static:minilm-l6-v2-static:")
    v = p.embed(
        [
            "The committee approved the new budget on Tuesday.",
            "On Tuesday the new budget was approved by the committee.",
            "Photosynthesis turns light, water and carbon dioxide into sugar.",
        ]
    )
    assert v.dtype == np.float32 and v.flags.c_contiguous
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > 0.9 > v[0] @ v[2]


def test_empty_and_unknown_texts_give_zero_rows(tiny: Path) -> None:
    p = StaticProvider(tiny)
    v = p.embed(["", "zzz", "cat"])
    assert v.shape == (3, 8)
    assert not v[0].any() and not v[1].any() and abs(float(np.linalg.norm(v[2])) - 1) < 1e-6
    assert p.embed([]).shape == (0, 8)


def test_max_length_truncates(tiny: Path) -> None:
    short = StaticProvider(tiny, max_length=2)
    _ids, off = short.token_ids(["cat dog sat mat"])
    assert off.tolist() == [0, 2]
    assert np.allclose(short.embed(["cat dog sat mat"]), short.embed(["cat dog"]))
    unlimited = StaticProvider(_tiny_model(tiny.parent / "nolimit", max_length=None))
    assert unlimited.max_length is None
    assert unlimited.token_ids(["cat " * 2000])[1].tolist() == [0, 2000]


def test_word_cache_is_capped(tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from neardup.embeddings import static

    monkeypatch.setattr(static, "WORD_CACHE_SIZE", 3)
    p = StaticProvider(tiny)
    a = p.token_ids(["cat dog", "sat mat tax"])
    b = p.token_ids(["cat dog", "sat mat tax"], word_cache=False)
    assert a[0].tolist() == b[0].tolist()
    assert len(p._words) <= 5


def test_bad_folders(tmp_path: Path, tiny: Path) -> None:
    with pytest.raises(ConfigError, match="not a local folder"):
        StaticProvider(tmp_path / "missing")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "config.json").write_text("{}")
    with pytest.raises(ConfigError, match=r"no model\.safetensors"):
        StaticProvider(tmp_path / "half")
    bad = _tiny_model(tmp_path / "bad")
    (bad / "model.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(FormatError, match="cannot load"):
        StaticProvider(bad).embed(["cat"])
    other = _tiny_model(tmp_path / "other")
    safetensors_numpy.save_file(
        {"embeddings": np.ones((3, 4), np.float32)}, str(other / "model.safetensors")
    )
    with pytest.raises(FormatError, match="do not belong together"):
        _ = StaticProvider(other).dimension
    with pytest.raises(ConfigError, match="max_length"):
        StaticProvider(tiny, max_length=0)
    with pytest.raises(ConfigError, match="sequence of str"):
        StaticProvider(tiny).embed("cat")  # type: ignore[arg-type]


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 40), st.integers(-1, 9), st.booleans())
def test_pooling_kernels_match_the_reference(seed: int, n: int, cut: int, norm: bool) -> None:
    rng = np.random.default_rng(seed)
    table = rng.standard_normal((10, 6)).astype(np.float32)
    lengths = rng.integers(0, 12, n)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    ids = rng.integers(0, 10, int(offsets[-1]))
    fast = pooling.mean_pool(table, ids, offsets, skip=3, normalize=norm)
    ref = pooling_reference.mean_pool(table, ids, offsets, 3, norm)
    assert fast.tobytes() == ref.tobytes()
    words = rng.integers(0, 5, 7)
    word_offsets = np.zeros(8, np.int64)
    np.cumsum(words, out=word_offsets[1:])
    word_ids = rng.integers(0, 100, int(word_offsets[-1]))
    text_words = offsets // 2
    index = rng.integers(0, 7, int(text_words[-1]))
    a = pooling.expand_words(index, text_words, word_ids, word_offsets, cut)
    b = pooling_reference.expand_words(index, text_words, word_ids, word_offsets, cut)
    assert a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist()
