"""Threshold sweeps from one sketch pass, brute-force truth on a sample, and the LSH S-curve.

:func:`sweep` runs :func:`~neardup.pipeline.dedup` once, at the lowest threshold, and filters
its pairs (which carry their similarity) for every higher one. For the exact indexes (SimHash,
pHash, TLSH, CTPH) that equals one run per threshold; for MinHash the LSH banding planned for
the lowest threshold finds every higher-similarity pair with at least the probability a plan
for that threshold would, so the sweep's recall is never lower than separate runs'.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError, InputError
from neardup.evaluate.scores import Labels, Scores, evaluate, pair_key
from neardup.io import Document
from neardup.pipeline import DocLike, dedup, to_documents

__all__ = [
    "CurveBin",
    "LSHCurve",
    "exact_jaccard_pairs",
    "exact_truth",
    "lsh_curve",
    "parse_range",
    "sample_documents",
    "sweep",
]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
_EPS = 1e-9


#: The most thresholds one sweep takes (each is a scoring pass over the candidate pairs).
MAX_THRESHOLDS = 10_000


def parse_range(spec: str) -> list[float]:
    """Thresholds from ``start:stop:step`` (``stop`` included) or a comma list.

    Raises:
        ConfigError: the spec is malformed, empty, leaves [0, 1], or gives more than
            :data:`MAX_THRESHOLDS` thresholds.

    Examples:
        >>> parse_range("0.5:0.7:0.1")
        [0.5, 0.6, 0.7]
        >>> parse_range("0.9,0.8")
        [0.8, 0.9]
    """
    try:
        if ":" in spec:
            start, stop, step = (float(x) for x in spec.split(":"))
            if not all(map(math.isfinite, (start, stop, step))) or step <= 0 or stop < start:
                raise ConfigError(
                    f"bad sweep {spec!r}: use start:stop:step, finite numbers with step > 0"
                )
            n = math.floor((stop - start) / step + 1e-6) + 1
            if n > MAX_THRESHOLDS:
                raise ConfigError(
                    f"bad sweep {spec!r}: {n} thresholds, over the cap of {MAX_THRESHOLDS}; "
                    "take a larger step (0.001 gives 1001 between 0 and 1)"
                )
            values = [round(start + k * step, 10) for k in range(n)]
        else:
            values = [float(x) for x in spec.split(",") if x.strip()]
            if len(values) > MAX_THRESHOLDS:
                raise ConfigError(
                    f"bad sweep: {len(values)} thresholds, over the cap of {MAX_THRESHOLDS}"
                )
    except ConfigError:
        raise
    except ValueError:
        raise ConfigError(
            f"bad sweep {spec!r}: use start:stop:step (e.g. 0.5:0.95:0.05) or a comma list"
        ) from None
    if not values or any(not 0.0 <= v <= 1.0 for v in values):
        raise ConfigError(f"bad sweep {spec!r}: thresholds must be similarities in [0, 1]")
    return sorted(set(values))


def sweep(
    docs: Sequence[DocLike],
    method: str,
    thresholds: Sequence[float],
    labels: Labels,
    *,
    transitive: bool = False,
    **options: Any,
) -> list[Scores]:
    """Scores at each threshold from one sketch pass (see the module docstring).

    Args:
        docs: The corpus.
        method: A method name (``minhash``, ``simhash``, ``ctph``, ``tlsh``, ``phash``, ...).
        thresholds: Similarity thresholds in [0, 1].
        labels: The truth.
        transitive: Passed to :func:`~neardup.evaluate.evaluate`.
        **options: Method options (``num_perm``, ...).

    Returns:
        One :class:`Scores` per threshold, lowest first.

    Raises:
        ConfigError: no thresholds, or one outside [0, 1].

    Examples:
        >>> lab = Labels.from_pairs([("0", "1")])
        >>> docs = ["a b c d e f g h i j", "a b c d e f g h i k", "z y x w v u t s r q"]
        >>> [(s.threshold, s.tp, s.fp) for s in sweep(docs, "minhash", [0.3, 0.9], lab)]
        [(0.3, 1, 0), (0.9, 0, 0)]
    """
    ts = sorted(set(float(t) for t in thresholds))
    if not ts or any(not 0.0 <= t <= 1.0 for t in ts):
        raise ConfigError(f"thresholds must be similarities in [0, 1], got {list(thresholds)}")
    base = dedup(list(docs), method=method, threshold=ts[0], **options)
    out = []
    for t in ts:
        kept = [p for p in base.pairs if p.similarity >= t - _EPS]
        s = evaluate(kept, labels, doc_ids=base.doc_ids, transitive=transitive)
        out.append(dataclasses.replace(s, threshold=t))
    return out


def sample_documents(docs: Sequence[DocLike], n: int | None, *, seed: int = 0) -> list[Document]:
    """Up to ``n`` documents chosen with a seeded generator, in input order (all if ``None``).

    Examples:
        >>> [d.id for d in sample_documents(["a", "b", "c", "d"], 2, seed=1)]
        ['1', '2']
    """
    all_docs = list(to_documents(docs))
    if n is None or n >= len(all_docs):
        return all_docs
    if n < 2:
        raise ConfigError(f"a sample needs at least 2 documents, got {n}")
    keep = sorted(random.Random(seed).sample(range(len(all_docs)), n))
    return [all_docs[i] for i in keep]


def _texts(docs: Sequence[Document]) -> list[str]:
    out = []
    for d in docs:
        if d.text is None:
            raise InputError(f"document {d.id!r} has no text; exact Jaccard needs text")
        out.append(d.text)
    return out


def exact_jaccard_pairs(texts: Sequence[str], *, k: int = 5) -> tuple[I64, I64, F64]:
    """Exact Jaccard of the word ``k``-shingle sets of every pair (MinHash's sets and
    canonicalizer), as ``(a, b, similarity)`` arrays with ``a < b``. Quadratic: sample first.

    Examples:
        >>> a, b, s = exact_jaccard_pairs(["a b c d e f", "a b c d e g", "x"], k=2)
        >>> a.tolist(), b.tolist(), [round(x, 3) for x in s.tolist()]
        ([0, 0, 1], [1, 2, 2], [0.667, 0.0, 0.0])
    """
    from neardup._kernels import engine
    from neardup.canonicalize import Canonicalizer
    from neardup.sketch.sets import jaccard_pairs, unique_per_doc
    from neardup.tokenize import ShingleTokenizer, WordTokenizer, token_spans

    canon = Canonicalizer("txtfp")
    spans = token_spans(
        ShingleTokenizer(k, WordTokenizer()), [canon.canonicalize(t) for t in texts]
    )
    lo, _ = engine.hash_spans(spans, "xxh3_64", 0)
    values, offsets = unique_per_doc(lo, spans.doc_offsets)
    a, b = np.triu_indices(len(texts), k=1)
    a, b = a.astype(np.int64), b.astype(np.int64)
    return a, b, jaccard_pairs(values, offsets, a, b)


def _hamming_pairs(
    docs: Sequence[Document], method: str, threshold: float
) -> list[tuple[int, int]]:
    from neardup.methods import make_method

    m = make_method(method, threshold)
    radius = getattr(m, "radius", None)
    if radius is None:
        raise ConfigError(f"method {method!r} has no Hamming distance; use simhash or phash")
    codes = np.asarray(m.sketch(list(docs)), dtype=np.uint64).reshape(len(docs), -1)
    out: list[tuple[int, int]] = []
    for i in range(len(docs) - 1):
        d = np.bitwise_count(codes[i + 1 :] ^ codes[i]).sum(axis=1)
        out.extend((i, i + 1 + int(j)) for j in np.flatnonzero(d <= radius))
    return out


def exact_truth(
    docs: Sequence[DocLike],
    *,
    measure: Literal["jaccard", "hamming"] = "jaccard",
    threshold: float = 0.8,
    sample: int | None = 1000,
    seed: int = 0,
    method: str = "phash",
) -> tuple[list[Document], Labels]:
    """Brute-force labels on a sample: every pair compared, no index.

    Args:
        docs: The corpus.
        measure: ``"jaccard"``: exact Jaccard of word 5-shingle sets (text) at or above
            ``threshold``; ``"hamming"``: the ``method``'s codes (``phash``, ``simhash``)
            within its radius for ``threshold``, compared exhaustively.
        threshold: The similarity that makes a true pair.
        sample: How many documents to draw (``None``: all; the cost is quadratic).
        seed: Seed of the sample.
        method: The hash for ``"hamming"``.

    Returns:
        The sampled documents (run the method on these) and their labels.

    Raises:
        ConfigError: unknown measure, or a method without a Hamming distance.

    Examples:
        >>> docs, lab = exact_truth(["a b c d e f g", "a b c d e f g h", "x y z"], threshold=0.5)
        >>> sorted(lab.pairs)
        [('0', '1')]
    """
    sampled = sample_documents(docs, sample, seed=seed)
    if measure == "jaccard":
        a, b, s = exact_jaccard_pairs(_texts(sampled))
        ok = s >= threshold - _EPS
        idx = list(zip(a[ok].tolist(), b[ok].tolist(), strict=True))
    elif measure == "hamming":
        idx = _hamming_pairs(sampled, method, threshold)
    else:
        raise ConfigError(f"unknown truth measure {measure!r}; use jaccard or hamming")
    labels = Labels.from_pairs(pair_key(sampled[i].id, sampled[j].id) for i, j in idx)
    return sampled, labels


@dataclasses.dataclass(frozen=True, slots=True)
class CurveBin:
    """Pairs whose exact Jaccard falls in ``[lo, hi)`` (the last bin includes 1.0)."""

    lo: float
    hi: float
    pairs: int
    candidates: int
    predicted: float

    @property
    def measured(self) -> float:
        """Fraction of the bin's pairs that became LSH candidates (0.0 for an empty bin)."""
        return self.candidates / self.pairs if self.pairs else 0.0


@dataclasses.dataclass(frozen=True, slots=True)
class LSHCurve:
    """The MinHash LSH S-curve: predicted ``P(s) = 1 - (1 - s^rows)^bands`` vs measured.

    Attributes:
        threshold: The threshold the banding was planned for.
        bands: Bands of the plan.
        rows: Rows per band.
        bins: Measured candidate rates per exact-Jaccard bin; ``predicted`` is the mean of
            ``P(s)`` over the bin's pairs.
        predicted: ``(s, P(s))`` at 51 evenly spaced points.
    """

    threshold: float
    bands: int
    rows: int
    bins: list[CurveBin]
    predicted: list[tuple[float, float]]


def lsh_curve(
    docs: Sequence[DocLike],
    *,
    threshold: float = 0.8,
    num_perm: int = 128,
    bins: int = 10,
    sample: int | None = 1000,
    seed: int = 0,
) -> LSHCurve:
    """Measure which pairs the MinHash LSH index (as ``dedup`` plans it) makes candidates.

    Every pair of a sample gets its exact shingle Jaccard; the pairs are binned by it, and
    each bin's share of LSH candidates is set against the predicted probability.

    Raises:
        ConfigError: bad threshold, num_perm or bins.

    Examples:
        >>> c = lsh_curve(["a b c d e f g h", "a b c d e f g h", "q r s t u v w x"], bins=2)
        >>> [(b.pairs, b.candidates) for b in c.bins]
        [(2, 0), (1, 1)]
    """
    from neardup.canonicalize import Canonicalizer
    from neardup.index.lsh import LSHIndex
    from neardup.sketch.minhash import MinHasher
    from neardup.tokenize import ShingleTokenizer, WordTokenizer

    if isinstance(bins, bool) or not isinstance(bins, int) or bins < 1:
        raise ConfigError(f"bins must be a positive integer, got {bins!r}")
    texts = _texts(sample_documents(docs, sample, seed=seed))
    hasher = MinHasher(
        num_perm,
        tokenizer=ShingleTokenizer(5, WordTokenizer()),
        canonicalizer=Canonicalizer("txtfp"),
    )
    index = LSHIndex(threshold=threshold, num_perm=num_perm)
    index.add_many(list(range(len(texts))), hasher.sketch_many(texts))
    n = np.int64(max(len(texts), 1))
    cand = np.array(
        sorted(min(int(x), int(y)) * n + max(int(x), int(y)) for x, y, _ in index.pairs()),  # type: ignore[call-overload]
        dtype=np.int64,
    )
    a, b, s = exact_jaccard_pairs(texts)
    hit = np.isin(a * n + b, cand)
    p = 1.0 - (1.0 - s**index.rows) ** index.bands
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.minimum((s * bins + 1e-12).astype(np.int64), bins - 1)
    out = []
    for k in range(bins):
        mask = which == k
        count = int(mask.sum())
        out.append(
            CurveBin(
                float(edges[k]),
                float(edges[k + 1]),
                count,
                int(hit[mask].sum()),
                float(p[mask].mean()) if count else 0.0,
            )
        )
    return LSHCurve(threshold, index.bands, index.rows, out, index.plan.curve(51))
