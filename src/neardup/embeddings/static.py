"""StaticProvider: static token vectors mean-pooled per text (the model2vec format), on CPU.

A static model is a table of one vector per token of a tokenizer: a text's embedding is the
mean of its tokens' vectors, scaled to unit length (Tulkens and van Dongen 2024, "Model2Vec:
fast state-of-the-art static embeddings"). There is no neural network at run time, so a text
costs a tokenizer pass and a few hundred additions: thousands of times less than a
transformer forward pass (see docs/embeddings.md for the measured ratio).

Any folder in the model2vec layout loads:

- ``config.json`` (``model_type: "model2vec"``, optional ``normalize`` and ``max_length``);
- ``model.safetensors`` with the ``embeddings`` matrix ``(rows, dim)`` and optionally
  ``weights`` (one factor per token) and ``mapping`` (token id -> row, for vocabulary
  quantization);
- ``tokenizer.json``, a Hugging Face ``tokenizers`` file.

The default model ships inside neardup (``neardup/embeddings/models/minilm-l6-v2-static``):
all-MiniLM-L6-v2 distilled with model2vec (each of its 29,525 vocabulary tokens run through the
transformer and mean-pooled, PCA to 256 dimensions, SIF weighting with coefficient 1e-4,
float16). Nothing is downloaded, ever. ``scripts/distill_static_model.py`` rebuilds it; its
README says how it was made.

Encoding follows model2vec's ``StaticModel.encode``: each text is cut to ``max_length *
median token length`` characters, tokenized without special tokens and truncated to
``max_length`` tokens; unknown tokens are left out of the mean; an empty text gives a zero
vector. Pooling runs in the batch engine (:mod:`neardup.embeddings._pooling`) over one flat id
array, not per text in Python.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt
import xxhash

from neardup._extras import require_extra
from neardup.embeddings._pooling import expand_words, mean_pool
from neardup.errors import ConfigError, FormatError

__all__ = ["DEFAULT_STATIC_MODEL", "StaticProvider", "default_static_model_path"]

logger = logging.getLogger(__name__)

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]

#: Folder name of the bundled default model (under ``neardup/embeddings/models/``).
DEFAULT_STATIC_MODEL = "minilm-l6-v2-static"

#: Hard cap on ``max_length`` (tokens per text): beyond it a static mean changes little.
_MAX_LENGTH_CAP = 1_000_000

#: Words kept in a provider's word cache; the cache is emptied when a batch would pass it.
WORD_CACHE_SIZE = 1_000_000

#: Characters that ``str.split`` treats as whitespace but a BERT normalizer with
#: ``clean_text`` deletes as control characters (so they join, not split, their neighbours).
_CLEANED_CONTROLS = re.compile("[\x0b\x0c\x1c-\x1f\x85]")

#: Normalizers and pre-tokenizers under which a text's tokens are the concatenation of its
#: whitespace-separated words' tokens (every step is per character or per word).
_WORD_LOCAL_NORMALIZERS = {
    "BertNormalizer",
    "Lowercase",
    "NFC",
    "NFD",
    "NFKC",
    "NFKD",
    "StripAccents",
}
_WORD_LOCAL_MODELS = {"WordPiece", "WordLevel"}


def default_static_model_path() -> Path:
    """The folder of the bundled default static model (all-MiniLM-L6-v2 distilled, 256-d).

    Examples:
        >>> default_static_model_path().name
        'minilm-l6-v2-static'
    """
    return Path(__file__).resolve().parent / "models" / DEFAULT_STATIC_MODEL


class _Encoding(Protocol):
    @property
    def ids(self) -> list[int]: ...


class _Tokenizer(Protocol):
    def encode_batch_fast(
        self, inputs: list[str], add_special_tokens: bool = ...
    ) -> list[_Encoding]: ...

    def enable_truncation(self, max_length: int) -> None: ...

    def no_truncation(self) -> None: ...

    def token_to_id(self, token: str) -> int | None: ...

    def get_vocab_size(self, with_added_tokens: bool = ...) -> int: ...

    def to_str(self) -> str: ...

    def no_padding(self) -> None: ...

    def get_vocab(self, with_added_tokens: bool = ...) -> dict[str, int]: ...


@dataclass(frozen=True, slots=True)
class _Loaded:
    tokenizer: _Tokenizer
    table: F32  # (vocab, dim) float32: rows already mapped and weighted
    unk: int  # unknown-token id left out of means, -1 when the tokenizer has none
    char_cap: int | None  # texts are cut to this many characters first (None: no cap)
    digest: str
    word_local: bool  # tokens of a text = concatenation of its words' tokens (word cache)


def _word_local(spec: dict[str, object]) -> bool:
    """Whether tokenizing word by word gives the same ids as tokenizing the whole text.

    True for BERT-style tokenizers: a ``BertNormalizer`` that cleans control characters (or
    only per-character normalizers with ``BertPreTokenizer``), the ``BertPreTokenizer``
    (split on whitespace, then on punctuation within a word) and a WordPiece or WordLevel
    model. Byte-level BPE and SentencePiece models carry the space inside tokens: no.
    """
    pre = spec.get("pre_tokenizer")
    model = spec.get("model")
    if not isinstance(pre, dict) or pre.get("type") != "BertPreTokenizer":
        return False
    if not isinstance(model, dict) or model.get("type") not in _WORD_LOCAL_MODELS:
        return False
    norm = spec.get("normalizer")
    steps = (
        norm.get("normalizers", [])
        if isinstance(norm, dict) and norm.get("type") == "Sequence"
        else [norm]
    )
    clean = False
    for step in steps:
        if not isinstance(step, dict) or step.get("type") not in _WORD_LOCAL_NORMALIZERS:
            return False
        if step.get("type") == "BertNormalizer":
            clean = clean or bool(step.get("clean_text", False))
    added = spec.get("added_tokens", [])
    if isinstance(added, list) and any(
        isinstance(a, dict) and any(ch.isspace() for ch in str(a.get("content", ""))) for a in added
    ):
        return False
    return clean


def _unk_id(tokenizer: _Tokenizer) -> int:
    spec = json.loads(tokenizer.to_str()).get("model", {})
    token = spec.get("unk_token")
    if isinstance(token, str):
        found = tokenizer.token_to_id(token)
        return -1 if found is None else int(found)
    unk = spec.get("unk_id")  # Unigram models name the id
    return int(unk) if isinstance(unk, int) else -1


def _csr(rows: list[list[int]]) -> tuple[I64, I64]:
    """Lists of ids as one flat array and offsets."""
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, rows), dtype=np.int64, count=len(rows)), out=offsets[1:])
    flat = np.fromiter(itertools.chain.from_iterable(rows), dtype=np.int64, count=int(offsets[-1]))
    return flat, offsets


class StaticProvider:
    """Embed texts with a static (model2vec-format) model: token vectors mean-pooled.

    The model loads on first use (``dimension`` or ``embed``); loading reads the safetensors
    file and the tokenizer (well under a second for the default 15 MB model).

    Args:
        model: A model2vec-format folder; ``None`` is the bundled default
            (all-MiniLM-L6-v2 distilled to 256 dimensions).
        max_length: Tokens per text kept (default: the model's ``max_length``, else 512;
            ``None`` in the config means no limit).
        normalize: Unit-length rows (default: the model config's ``normalize``, else true).
        batch_size: Texts tokenized per call of the tokenizer (default 4096).

    Raises:
        ConfigError: ``model`` is not a model2vec folder (the message says which file is
            missing), or a parameter is out of range.

    Examples:
        >>> p = StaticProvider()
        >>> p.model_path.name, p.dimension
        ('minilm-l6-v2-static', 256)
        >>> v = p.embed(["a cat sat on the mat", "the cat sat on a mat", "tax law"])
        >>> bool(v[0] @ v[1] > 0.95), bool(v[0] @ v[2] < 0.5)
        (True, True)
    """

    def __init__(
        self,
        model: str | os.PathLike[str] | None = None,
        *,
        max_length: int | None = None,
        normalize: bool | None = None,
        batch_size: int = 4096,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(f"batch_size must be a positive integer, got {batch_size!r}")
        if max_length is not None and (
            isinstance(max_length, bool)
            or not isinstance(max_length, int)
            or not 1 <= max_length <= _MAX_LENGTH_CAP
        ):
            raise ConfigError(
                f"max_length must be an integer from 1 to {_MAX_LENGTH_CAP}, got {max_length!r}"
            )
        path = default_static_model_path() if model is None else Path(model).expanduser()
        self._check_folder(path, model)
        try:
            config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(
                f"cannot read {os.fspath(path / 'config.json')!r} ({exc}); a model2vec folder "
                "needs a JSON config.json"
            ) from exc
        if not isinstance(config, dict):
            raise ConfigError(f"{os.fspath(path / 'config.json')!r} is not a JSON object")
        if max_length is None:
            configured = config.get("max_length", 512)
            max_length = None if configured is None else int(configured)
        self.max_length = max_length
        self.normalize = bool(config.get("normalize", True) if normalize is None else normalize)
        self.batch_size = batch_size
        self._path = path.resolve()
        self._loaded: _Loaded | None = None
        self._lock = threading.Lock()
        self._words: dict[str, int] = {}
        self._word_ids: list[I64] = []
        self._word_ends: list[I64] = []
        self._word_total = 0
        self._word_table: tuple[I64, I64] | None = None

    @staticmethod
    def _check_folder(path: Path, given: str | os.PathLike[str] | None) -> None:
        shown = os.fspath(path) if given is None else os.fspath(given)
        if not path.is_dir():
            raise ConfigError(
                f"static model {shown!r} is not a local folder; StaticProvider never downloads, "
                "so pass a model2vec-format folder (config.json, model.safetensors, "
                "tokenizer.json; StaticModel.save_pretrained(path) writes one), or None for the "
                "bundled default"
            )
        for name in ("config.json", "model.safetensors", "tokenizer.json"):
            if not (path / name).is_file():
                raise ConfigError(
                    f"folder {shown!r} has no {name}, so it is not a model2vec-format model; "
                    "pass a folder written by model2vec's StaticModel.save_pretrained(path)"
                )

    def __repr__(self) -> str:
        return (
            f"StaticProvider(model={os.fspath(self._path)!r}, max_length={self.max_length}, "
            f"normalize={self.normalize})"
        )

    @property
    def model_path(self) -> Path:
        """The model folder, so that other tools (model2vec, semhash) can load the same model."""
        return self._path

    @property
    def model_id(self) -> str:
        """``"static:<folder name>:<16 hex digits of the weights' xxh3-64>"``."""
        return f"static:{self._path.name}:{self._load().digest}"

    @property
    def dimension(self) -> int:
        """Vector length (256 for the default model); loads the model if needed."""
        return int(self._load().table.shape[1])

    def _load(self) -> _Loaded:
        with self._lock:
            if self._loaded is None:
                self._loaded = self._read()
            return self._loaded

    def _read(self) -> _Loaded:
        tokenizers = require_extra("embeddings", "tokenizers")
        st = require_extra("embeddings", "safetensors.numpy")
        weights_file = self._path / "model.safetensors"
        logger.debug("loading static model from %s", self._path)
        try:
            raw = weights_file.read_bytes()
            tensors = st.load(raw)
            tokenizer: _Tokenizer = tokenizers.Tokenizer.from_file(
                os.fspath(self._path / "tokenizer.json")
            )
        except Exception as exc:  # safetensors and tokenizers raise their own exception types
            raise FormatError(
                f"cannot load the static model in {os.fspath(self._path)!r} "
                f"({type(exc).__name__}: {exc}); check that model.safetensors and "
                "tokenizer.json are complete model2vec files"
            ) from exc
        table = self._table(tensors, tokenizer.get_vocab_size(with_added_tokens=True))
        tokenizer.no_padding()
        tokenizer.no_truncation()
        median = int(np.median([len(t) for t in tokenizer.get_vocab()] or [1]))
        cap = None if self.max_length is None else self.max_length * max(1, median)
        spec = json.loads(tokenizer.to_str())
        return _Loaded(
            tokenizer=tokenizer,
            table=table,
            unk=_unk_id(tokenizer),
            char_cap=cap,
            digest=xxhash.xxh3_64_hexdigest(raw),
            word_local=isinstance(spec, dict) and _word_local(spec),
        )

    def _table(self, tensors: dict[str, npt.NDArray[np.generic]], vocab: int) -> F32:
        emb = tensors.get("embeddings")
        if emb is None or emb.ndim != 2 or emb.shape[0] == 0 or emb.shape[1] == 0:
            raise FormatError(
                f"model.safetensors in {os.fspath(self._path)!r} has no 2-D 'embeddings' "
                "tensor; it is not a model2vec model"
            )
        mapping = tensors.get("mapping")
        weights = tensors.get("weights")
        table = np.asarray(emb, dtype=np.float32)
        if mapping is not None:
            rows = np.asarray(mapping, dtype=np.int64).reshape(-1)
            if rows.size and (rows.min() < 0 or rows.max() >= table.shape[0]):
                raise FormatError(
                    f"the 'mapping' tensor in {os.fspath(self._path)!r} points outside the "
                    "embeddings; the model file is damaged"
                )
            table = table[rows]
        if weights is not None:
            w = np.asarray(weights, dtype=np.float32).reshape(-1)
            if w.shape[0] != table.shape[0]:
                raise FormatError(
                    f"the 'weights' tensor in {os.fspath(self._path)!r} has {w.shape[0]} "
                    f"entries for {table.shape[0]} tokens; the model file is damaged"
                )
            table = table * w[:, None]
        if table.shape[0] < vocab:
            raise FormatError(
                f"the static model in {os.fspath(self._path)!r} has {table.shape[0]} token "
                f"vectors but its tokenizer {vocab} tokens; tokenizer.json and "
                "model.safetensors do not belong together"
            )
        if not np.all(np.isfinite(table)):
            raise FormatError(
                f"the token vectors in {os.fspath(self._path)!r} hold NaN or infinity; the "
                "model file is damaged"
            )
        return np.ascontiguousarray(table)

    def token_ids(self, texts: Sequence[str], *, word_cache: bool = True) -> tuple[I64, I64]:
        """Tokenize ``texts`` into one flat id array and ``len(texts) + 1`` offsets (CSR).

        With a BERT-style tokenizer (see the module docstring) each distinct
        whitespace-separated word is tokenized once and cached: a corpus has far fewer
        distinct words than words, so the tokenizer runs on a small fraction of the text.
        The ids are the same as tokenizing each whole text (the test suite checks it).

        Args:
            texts: The texts.
            word_cache: Use the word cache when the tokenizer allows it (default true);
                false tokenizes every text whole.

        Raises:
            ConfigError: ``texts`` is not a sequence of str.
        """
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
            raise ConfigError("texts must be a sequence of str; wrap a single text in a list")
        loaded = self._load()
        chunks: list[tuple[I64, I64]] = []
        with self._lock:  # the tokenizer and the word cache are shared state
            for start in range(0, len(texts), self.batch_size):
                batch = list(texts[start : start + self.batch_size])
                if loaded.char_cap is not None:
                    batch = [t[: loaded.char_cap] for t in batch]
                if word_cache and loaded.word_local:
                    chunks.append(self._by_words(loaded, batch))
                else:
                    chunks.append(self._whole(loaded, batch))
        offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        if chunks:
            np.cumsum(np.concatenate([np.diff(c[1]) for c in chunks]), out=offsets[1:])
        ids = np.concatenate([c[0] for c in chunks]) if chunks else np.zeros(0, dtype=np.int64)
        return ids, offsets

    def _whole(self, loaded: _Loaded, batch: list[str]) -> tuple[I64, I64]:
        if self.max_length is None:
            loaded.tokenizer.no_truncation()
        else:
            loaded.tokenizer.enable_truncation(self.max_length)
        try:
            rows = [
                e.ids for e in loaded.tokenizer.encode_batch_fast(batch, add_special_tokens=False)
            ]
        finally:
            loaded.tokenizer.no_truncation()
        return _csr(rows)

    def _by_words(self, loaded: _Loaded, batch: list[str]) -> tuple[I64, I64]:
        words = [_CLEANED_CONTROLS.sub("", t).split() for t in batch]
        text_words = np.zeros(len(batch) + 1, dtype=np.int64)
        np.cumsum(
            np.fromiter(map(len, words), dtype=np.int64, count=len(words)), out=text_words[1:]
        )
        flat = list(itertools.chain.from_iterable(words))
        cache = self._words
        new = [w for w in dict.fromkeys(flat) if w not in cache]
        if len(cache) + len(new) > WORD_CACHE_SIZE:
            self._reset_words()
            cache = self._words
            new = list(dict.fromkeys(flat))
        if new:
            encoded = loaded.tokenizer.encode_batch_fast(new, add_special_tokens=False)
            rows = [e.ids for e in encoded]
            ids, off = _csr(rows)
            base = len(cache)
            self._word_ids.append(ids)
            self._word_ends.append(off[1:] + self._word_total)
            self._word_total += int(off[-1])
            cache.update(zip(new, range(base, base + len(new)), strict=True))
            self._word_table = None
        word_index = np.fromiter(map(cache.__getitem__, flat), dtype=np.int64, count=len(flat))
        word_ids, word_offsets = self._word_arrays()
        limit = -1 if self.max_length is None else self.max_length
        return expand_words(word_index, text_words, word_ids, word_offsets, limit)

    def _reset_words(self) -> None:
        self._words = {}
        self._word_ids = []
        self._word_ends = []
        self._word_total = 0
        self._word_table = None

    def _word_arrays(self) -> tuple[I64, I64]:
        if self._word_table is None:
            ids = np.concatenate(self._word_ids) if self._word_ids else np.zeros(0, np.int64)
            offsets = np.zeros(len(self._words) + 1, dtype=np.int64)
            if self._word_ends:
                offsets[1:] = np.concatenate(self._word_ends)
            self._word_ids = [ids]
            self._word_ends = [offsets[1:].copy()]
            self._word_table = (ids, offsets)
            return ids, offsets
        return self._word_table

    def embed(self, texts: Sequence[str]) -> F32:
        """Embed ``texts``: one row per text, in order.

        Args:
            texts: The texts; an empty sequence gives shape ``(0, dimension)``.

        Returns:
            A C-contiguous float32 array ``(len(texts), dimension)``; unit rows when
            ``normalize`` is true, except a zero row for a text with no known token.

        Raises:
            ConfigError: ``texts`` is not a sequence of str.
        """
        ids, offsets = self.token_ids(texts)
        loaded = self._load()
        return mean_pool(loaded.table, ids, offsets, skip=loaded.unk, normalize=self.normalize)
