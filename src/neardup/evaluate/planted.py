"""Scores of a perturbation suite: how many planted pairs a method found, and how many of the
pairs it reported were right.

A suite plants one pair per variant: the variant and its original. Scoring it as clusters
(every two members of an original's group a true pair) asks the method to pair a 40%-typo
copy with a 40%-truncated one, pairs nobody planted; on 100 originals with 36 variants each
that made 66,600 "true pairs" and a headline recall of 0.10 that said nothing. Here recall
counts the planted pairs only, and precision counts a reported pair as right when both
documents come from one original (two variants of one original are near-duplicates too).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from neardup.errors import ConfigError
from neardup.evaluate.scores import pair_key
from neardup.evaluate.synthetic import SyntheticCorpus
from neardup.pipeline import dedup
from neardup.report import DedupResult, Pair

__all__ = ["PlantedScores", "planted_scores", "planted_sweep"]

_EPS = 1e-9


@dataclass(frozen=True, slots=True)
class PlantedScores:
    """What a method found of a suite's planted pairs at one threshold.

    Attributes:
        threshold: The threshold.
        planted: Planted pairs: one per variant (the variant and its original).
        found: Planted pairs the method reported directly.
        reported: Every pair the method reported.
        within: Reported pairs whose two documents come from one original.
        across: Reported pairs across two originals' groups: false positives.
    """

    threshold: float
    planted: int
    found: int
    reported: int
    within: int
    across: int

    @property
    def recall(self) -> float:
        """``found / planted`` (1.0 when nothing was planted)."""
        return self.found / self.planted if self.planted else 1.0

    @property
    def precision(self) -> float:
        """``within / reported`` (1.0 when nothing was reported)."""
        return self.within / self.reported if self.reported else 1.0

    @property
    def f1(self) -> float:
        """The harmonic mean of precision and recall (0.0 when both are 0)."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (floats rounded to 6 places)."""
        return {
            "threshold": self.threshold,
            "planted": self.planted,
            "found": self.found,
            "recall": round(self.recall, 6),
            "reported": self.reported,
            "within": self.within,
            "across": self.across,
            "precision": round(self.precision, 6),
            "f1": round(self.f1, 6),
        }


def planted_scores(
    corpus: SyntheticCorpus, pairs: Iterable[Pair | tuple[str, str]], *, threshold: float
) -> PlantedScores:
    """Score the pairs a method reported on ``corpus`` against its planted pairs.

    Examples:
        >>> from neardup.evaluate.synthetic import synthetic_text
        >>> c = synthetic_text(["a b c d e f g h i j k l m n o p q r s t"], kinds=["truncate"],
        ...                    strengths=[0.1, 0.9])
        >>> s = planted_scores(c, [("0", "0~truncate@0.1")], threshold=0.5)
        >>> s.planted, s.found, s.recall, s.precision
        (2, 1, 0.5, 1.0)
    """
    group = {o: o for o in corpus.originals}
    group.update({v.id: v.original for v in corpus.variants})
    found_pairs = {
        pair_key(p.a, p.b) if isinstance(p, Pair) else pair_key(p[0], p[1]) for p in pairs
    }
    found_pairs = {p for p in found_pairs if p[0] != p[1]}
    planted = {pair_key(v.id, v.original) for v in corpus.variants}
    within = sum(1 for a, b in found_pairs if group.get(a, a) == group.get(b, b))
    return PlantedScores(
        threshold=threshold,
        planted=len(planted),
        found=len(planted & found_pairs),
        reported=len(found_pairs),
        within=within,
        across=len(found_pairs) - within,
    )


def planted_sweep(
    corpus: SyntheticCorpus, method: str, thresholds: Sequence[float], **options: Any
) -> tuple[list[PlantedScores], DedupResult]:
    """Planted-pair scores at each threshold from one run at the lowest.

    Returns:
        One :class:`PlantedScores` per threshold, lowest first, and the run (at the lowest
        threshold) for :func:`~neardup.evaluate.perturbation_report`'s ``result``.

    Raises:
        ConfigError: no thresholds, or one outside [0, 1].

    Examples:
        >>> from neardup.evaluate.synthetic import synthetic_text
        >>> c = synthetic_text(["a b c d e f g h i j k l m n o p q r s t"], kinds=["truncate"],
        ...                    strengths=[0.1, 0.5])
        >>> scores, _ = planted_sweep(c, "minhash", [0.3, 0.7])
        >>> [(s.threshold, s.found, s.planted) for s in scores]
        [(0.3, 2, 2), (0.7, 1, 2)]
    """
    ts = sorted(set(float(t) for t in thresholds))
    if not ts or any(not 0.0 <= t <= 1.0 for t in ts):
        raise ConfigError(f"thresholds must be similarities in [0, 1], got {list(thresholds)}")
    base = dedup(corpus.documents, method=method, threshold=ts[0], **options)
    scores = [
        planted_scores(
            corpus,
            [(str(p.a), str(p.b)) for p in base.pairs if p.similarity >= t - _EPS],
            threshold=t,
        )
        for t in ts
    ]
    return scores, base
