"""Evaluation: scores against labels, threshold sweeps, brute-force truth, the LSH S-curve,
SVG plots and perturbation suites (see ``docs/eval.md``).

Not imported by ``import neardup``; import it by path: ``from neardup.evaluate import evaluate``.
"""

from __future__ import annotations

from neardup.evaluate.labels import read_labels
from neardup.evaluate.planted import PlantedScores, planted_scores, planted_sweep
from neardup.evaluate.plot import Panel, Series, lsh_panel, render_svg, sweep_panel, write_svg
from neardup.evaluate.scores import Labels, Scores, adjusted_rand_index, evaluate, pair_key
from neardup.evaluate.sweep import (
    CurveBin,
    LSHCurve,
    exact_jaccard_pairs,
    exact_truth,
    lsh_curve,
    parse_range,
    sample_documents,
    sweep,
)
from neardup.evaluate.synthetic import (
    DEFAULT_STRENGTHS,
    IMAGE_KINDS,
    TEXT_KINDS,
    DistinctOriginals,
    PerturbationReport,
    SyntheticCorpus,
    Variant,
    distinct_originals,
    perturb_text,
    perturbation_report,
    synthetic_images,
    synthetic_text,
)

__all__ = [
    "DEFAULT_STRENGTHS",
    "IMAGE_KINDS",
    "TEXT_KINDS",
    "CurveBin",
    "DistinctOriginals",
    "LSHCurve",
    "Labels",
    "Panel",
    "PerturbationReport",
    "PlantedScores",
    "Scores",
    "Series",
    "SyntheticCorpus",
    "Variant",
    "adjusted_rand_index",
    "distinct_originals",
    "evaluate",
    "exact_jaccard_pairs",
    "exact_truth",
    "lsh_curve",
    "lsh_panel",
    "pair_key",
    "parse_range",
    "perturb_text",
    "perturbation_report",
    "planted_scores",
    "planted_sweep",
    "read_labels",
    "render_svg",
    "sample_documents",
    "sweep",
    "sweep_panel",
    "synthetic_images",
    "synthetic_text",
    "write_svg",
]
