"""K-means-partitioned all-pairs (SemDeDup): no false positives, high recall, bounded cells."""

from __future__ import annotations

import numpy as np
import pytest

from neardup.errors import ConfigError
from neardup.index.semdedup import partitioned_pairs, spherical_kmeans
from neardup.index.vectors import VectorIndex, cosine_pairs, normalize_rows


def clustered(n: int, dim: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((n // 4, dim))
    x = centres[rng.integers(0, len(centres), n)] + rng.uniform(0.05, 0.4, (n, 1)) * (
        rng.standard_normal((n, dim))
    )
    return normalize_rows(x)


def test_recall_and_exact_scores_against_the_exhaustive_pairs() -> None:
    """Recall at 0.9 on 3,000 clustered 64-d vectors split into ~12 cells; asserted >= 0.97
    (the margin recovers pairs across cell boundaries; measured 0.99+ here and on 1M vectors
    in docs/embeddings.md). Every pair returned is an exhaustive pair with its exact score."""
    x = clustered(3_000, 64, seed=2)
    ei, ej, es = cosine_pairs(x, 0.9, normalized=True)
    exact = dict(zip(zip(ei.tolist(), ej.tolist(), strict=True), es.tolist(), strict=True))
    i, j, s = partitioned_pairs(x, 0.9, cluster_size=256, max_cluster=512)
    got = list(zip(i.tolist(), j.tolist(), strict=True))
    assert len(exact) > 1_000
    assert got == sorted(set(got))
    assert set(got) <= set(exact)
    assert np.allclose(s, [exact[p] for p in got], atol=1e-6)
    recall = len(got) / len(exact)
    assert recall >= 0.97, recall
    no_margin = partitioned_pairs(x, 0.9, cluster_size=256, max_cluster=512, margin=0.0)
    assert len(no_margin[0]) <= len(got)


def test_small_input_is_exhaustive_and_index_uses_it() -> None:
    x = clustered(400, 16, seed=4)
    a = partitioned_pairs(x, 0.8)  # below max_cluster: one exact cell
    b = cosine_pairs(x, 0.8, normalized=True)
    assert a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist()
    index = VectorIndex(16, approx_above=100)
    index.add_many(range(400), x)
    auto = [(p, q) for p, q, _ in index.pairs(0.8)]
    exact = [(p, q) for p, q, _ in index.pairs(0.8, method="exact")]
    assert set(auto) <= set(exact) and len(auto) >= 0.95 * len(exact)
    with pytest.raises(ConfigError, match="pairs"):
        index.top_k(x[:1], 2, method="partitioned")


def test_kmeans_is_deterministic_and_unit() -> None:
    x = clustered(2_000, 8, seed=5)
    c1 = spherical_kmeans(x, 10, seed=3, sample=500)
    c2 = spherical_kmeans(x, 10, seed=3, sample=500)
    assert c1.tobytes() == c2.tobytes()
    np.testing.assert_allclose(np.linalg.norm(c1, axis=1), 1.0, atol=1e-5)
    with pytest.raises(ConfigError, match="cluster_size"):
        partitioned_pairs(x, 0.9, cluster_size=0)
    with pytest.raises(ConfigError, match="margin"):
        partitioned_pairs(x, 0.9, margin=-1.0)
