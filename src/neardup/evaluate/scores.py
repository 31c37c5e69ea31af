"""Scores of a dedup run against labels: pair precision, recall and F1; adjusted Rand index.

The adjusted Rand index (Hubert and Arabie 1985) is computed here in numpy from the
contingency table of the two clusterings (no scikit-learn dependency); every document that is
in no cluster counts as a cluster of its own.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from neardup.errors import ConfigError
from neardup.report import DedupResult, Pair
from neardup.types import DocId

__all__ = ["Labels", "Scores", "adjusted_rand_index", "evaluate", "pair_key"]


def pair_key(a: DocId, b: DocId) -> tuple[str, str]:
    """An unordered pair as a sorted tuple of strings (the form labels and scores use).

    Examples:
        >>> pair_key("b", "a")
        ('a', 'b')
    """
    x, y = str(a), str(b)
    return (x, y) if x <= y else (y, x)


def _components(ids: Iterable[str], pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Connected components of a graph as ``{id: smallest id of its component}``."""
    parent: dict[str, str] = {i: i for i in ids}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {x: find(x) for x in list(parent)}


@dataclass(frozen=True, slots=True)
class Labels:
    """Ground truth: which documents are near-duplicates of each other.

    Attributes:
        pairs: True pairs as sorted ``(a, b)`` tuples.
        clusters: Cluster label per labelled document. Built from the pairs (connected
            components) when the labels were given as pairs.
    """

    pairs: frozenset[tuple[str, str]]
    clusters: Mapping[str, str]

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[DocId, DocId]]) -> Labels:
        """Labels from true pairs; the clusters are their connected components.

        Examples:
            >>> lab = Labels.from_pairs([("a", "b"), ("b", "c")])
            >>> sorted(lab.pairs), lab.clusters["c"]
            ([('a', 'b'), ('b', 'c')], 'a')
        """
        keys = frozenset(pair_key(a, b) for a, b in pairs if str(a) != str(b))
        ids = {x for p in keys for x in p}
        return cls(keys, _components(ids, keys))

    @classmethod
    def from_clusters(cls, clusters: Mapping[str, object]) -> Labels:
        """Labels from a cluster id per document; every two members of a cluster are a pair.

        Examples:
            >>> sorted(Labels.from_clusters({"a": 1, "b": 1, "c": 2}).pairs)
            [('a', 'b')]
        """
        groups: dict[str, list[str]] = {}
        for doc, c in clusters.items():
            groups.setdefault(str(c), []).append(str(doc))
        pairs = {pair_key(x, y) for m in groups.values() for x, y in itertools.combinations(m, 2)}
        return cls(frozenset(pairs), {str(d): str(c) for d, c in clusters.items()})

    @property
    def ids(self) -> frozenset[str]:
        """Every document the labels mention."""
        return frozenset(self.clusters)


@dataclass(frozen=True, slots=True)
class Scores:
    """How well predicted pairs and clusters match the labels.

    Precision is 1.0 when nothing was predicted and recall 1.0 when there was nothing to find
    (no false claims, nothing missed); F1 is their harmonic mean (0.0 when both are 0).

    Attributes:
        tp: Predicted pairs that are true pairs.
        fp: Predicted pairs that are not.
        fn: True pairs not predicted.
        precision: ``tp / (tp + fp)``.
        recall: ``tp / (tp + fn)``.
        f1: ``2 p r / (p + r)``.
        ari: Adjusted Rand index of predicted vs true clusters (1.0 = identical, about 0 =
            chance agreement), over every document of the run and of the labels.
        n_docs: Documents the ARI was computed over.
        threshold: The threshold of the run, when known.
    """

    tp: int
    fp: int
    fn: int
    precision: float
    recall: float
    f1: float
    ari: float
    n_docs: int
    threshold: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (floats rounded to 6 places)."""
        return {
            "threshold": self.threshold,
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "precision": round(self.precision, 6),
            "recall": round(self.recall, 6),
            "f1": round(self.f1, 6),
            "ari": round(self.ari, 6),
            "n_docs": self.n_docs,
        }


def _comb2(x: np.ndarray[Any, np.dtype[np.int64]]) -> float:
    return float((x * (x - 1) // 2).sum())


def adjusted_rand_index(a: Sequence[object], b: Sequence[object]) -> float:
    """Adjusted Rand index of two labelings of the same items (Hubert and Arabie 1985).

    From the contingency table ``n_ij``: ``(I - E) / (M - E)`` with ``I = Σ C(n_ij, 2)``,
    ``E = Σ C(a_i, 2) Σ C(b_j, 2) / C(n, 2)`` and ``M = (Σ C(a_i, 2) + Σ C(b_j, 2)) / 2``.
    When ``M == E`` (e.g. both all singletons, or both one cluster) the result is 1.0, as in
    scikit-learn.

    Examples:
        >>> adjusted_rand_index([0, 0, 1, 1], [5, 5, 7, 7])
        1.0
        >>> round(adjusted_rand_index([0, 0, 1, 2], [0, 0, 1, 1]), 4)
        0.5714
    """
    if len(a) != len(b):
        raise ConfigError(
            f"adjusted_rand_index needs two labelings of one length, got {len(a)} and {len(b)}"
        )
    n = len(a)
    if n < 2:
        return 1.0
    _, ia = np.unique(np.array([str(x) for x in a]), return_inverse=True)
    _, ib = np.unique(np.array([str(x) for x in b]), return_inverse=True)
    ia = ia.astype(np.int64)
    ib = ib.astype(np.int64)
    cells = np.unique(ia * np.int64(ib.max() + 1) + ib, return_counts=True)[1].astype(np.int64)
    index = _comb2(cells)
    sum_a = _comb2(np.bincount(ia).astype(np.int64))
    sum_b = _comb2(np.bincount(ib).astype(np.int64))
    expected = sum_a * sum_b / (n * (n - 1) / 2)
    maximum = (sum_a + sum_b) / 2
    if maximum == expected:
        return 1.0
    return float((index - expected) / (maximum - expected))


def _ratio(num: int, den: int) -> float:
    return num / den if den else 1.0


def evaluate(
    result_or_pairs: DedupResult | Iterable[Pair | tuple[DocId, DocId]],
    labels: Labels,
    *,
    doc_ids: Iterable[DocId] = (),
    transitive: bool = False,
) -> Scores:
    """Score a dedup result (or bare predicted pairs) against labels.

    Args:
        result_or_pairs: A :class:`~neardup.report.DedupResult`, or predicted pairs
            (:class:`~neardup.report.Pair` or ``(a, b)``); their clusters are then the
            connected components of the pairs.
        labels: The truth.
        doc_ids: More documents for the ARI (a result brings its own ``doc_ids``). Documents
            in no predicted or true cluster are singletons on both sides.
        transitive: Score every pair inside a predicted cluster, not only the pairs the
            method accepted directly (use with cluster labels and chaining methods).

    Returns:
        The scores; ``threshold`` is set when a result was given.

    Examples:
        >>> lab = Labels.from_pairs([("a", "b"), ("c", "d")])
        >>> s = evaluate([("a", "b"), ("a", "c")], lab, doc_ids="abcde")
        >>> s.tp, s.fp, s.fn, s.precision, s.recall
        (1, 1, 1, 0.5, 0.5)
    """
    threshold: float | None = None
    ids: set[str] = {str(d) for d in doc_ids}
    if isinstance(result_or_pairs, DedupResult):
        threshold = result_or_pairs.threshold
        ids.update(str(d) for d in result_or_pairs.doc_ids)
        raw = [(p.a, p.b) for p in result_or_pairs.pairs]
    else:
        raw = [(p.a, p.b) if isinstance(p, Pair) else (p[0], p[1]) for p in result_or_pairs]
    predicted = {pair_key(a, b) for a, b in raw if str(a) != str(b)}
    ids.update(x for p in predicted for x in p)
    ids.update(labels.ids)
    pred_clusters = _components(ids, predicted)
    if transitive:
        predicted = set(Labels.from_clusters(pred_clusters).pairs)
    tp = len(predicted & labels.pairs)
    fp = len(predicted) - tp
    fn = len(labels.pairs) - tp
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    order = sorted(ids)
    truth = [labels.clusters.get(d, "\x00" + d) for d in order]
    ari = adjusted_rand_index([pred_clusters[d] for d in order], truth)
    return Scores(tp, fp, fn, precision, recall, f1, ari, len(order), threshold)
