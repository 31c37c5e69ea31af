"""Embeddings cluster by center by default: a chain of vectors, each close to the next, does
not become one cluster (it did by components: 9,167 of 10,000 man pages at 0.9)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from neardup.methods import make_method
from neardup.pipeline import dedup

STEP = 0.3  # radians between neighbours: cosine 0.955 to the next, 0.825 to the one after


class ArcProvider:
    """Text ``"k"`` embeds to the unit vector at angle ``k * STEP``: a chain along an arc."""

    model_id = "arc"
    dimension = 2

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        angles = np.array([int(t) * STEP for t in texts])
        return np.stack((np.cos(angles), np.sin(angles)), axis=1).astype(np.float32)


def _method() -> object:
    m = make_method("embedding", 0.9)
    m._provider = ArcProvider()  # type: ignore[attr-defined]
    return m


def test_a_chain_of_vectors_is_not_one_cluster() -> None:
    docs = [(str(k), str(k)) for k in range(10)]
    r = dedup(docs, method=_method())  # type: ignore[arg-type]
    assert r.clustering == "center"
    assert [c.members for c in r.clusters] == [
        ("0", "1"),
        ("2", "3"),
        ("4", "5"),
        ("6", "7"),
        ("8", "9"),
    ]
    assert all(p.similarity >= 0.9 for p in r.pairs)
    # components, asked for, chain the whole arc (the cosine of its ends is -0.9)
    chained = dedup(docs, method=_method(), clustering="components")  # type: ignore[arg-type]
    assert [c.size for c in chained.clusters] == [10]


def test_by_name_the_default_is_center() -> None:
    from neardup.methods import method_info

    assert method_info("embedding").clustering == "center"
    assert method_info("minhash").clustering == "components"
