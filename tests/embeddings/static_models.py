"""Tiny model2vec-format models built in a temporary folder (for the StaticProvider tests)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

WORDS = ["the", "cat", "sat", "on", "mat", "dog", "ran", "far", "tax", "law", "caf", "na"]
PIECES = ["##s", "##e", "##ive", "##t", ",", ".", "!", "東", "京"]


def _tiny_model(
    folder: Path,
    *,
    dim: int = 8,
    weights: bool = False,
    mapping: bool = False,
    seed: int = 0,
    max_length: int | None = 512,
) -> Path:
    """A WordPiece tokenizer (BERT normalizer and pre-tokenizer) and random vectors."""
    from safetensors import numpy as safetensors_numpy
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    vocab = {"[PAD]": 0, "[UNK]": 1}
    for token in WORDS + PIECES:
        vocab[token] = len(vocab)
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True, clean_text=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    rng = np.random.default_rng(seed)
    rows = 5 if mapping else len(vocab)
    tensors = {"embeddings": rng.standard_normal((rows, dim)).astype(np.float32)}
    if mapping:
        tensors["mapping"] = rng.integers(0, rows, len(vocab)).astype(np.int64)
    if weights:
        tensors["weights"] = rng.uniform(0.1, 2.0, len(vocab)).astype(np.float32)
    safetensors_numpy.save_file(tensors, str(folder / "model.safetensors"))
    config = {"model_type": "model2vec", "normalize": True, "max_length": max_length}
    (folder / "config.json").write_text(json.dumps(config))
    return folder
