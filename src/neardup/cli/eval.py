"""``neardup eval``: score a method against labels, brute-force truth or a perturbation suite.

A thin layer over :mod:`neardup.evaluate`. Results go to stdout; a NeardupError becomes a
one-line message and exit code 1; usage errors exit with 2.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import click

from neardup.cli.inputs import documents, images
from neardup.cli.options import (
    errors,
    input_format_option,
    input_options,
    on_error_option,
    progress_option,
    quiet_models,
    quiet_option,
    record_options,
    threshold_option,
)
from neardup.io import Document
from neardup.methods import DEFAULT_THRESHOLDS

__all__ = ["eval_cmd"]

EVAL_METHODS = ("minhash", "simhash", "ctph", "tlsh", "phash", "embedding")


#: Makes the progress of the sweep's sketch pass, given the corpus size.
Progress = Callable[[int], tuple[Callable[[str, int], None] | None, Callable[[], None]]]


def _list(spec: str | None, what: str) -> list[str]:
    items = [x.strip() for x in (spec or "").split(",") if x.strip()]
    if spec is not None and not items:
        raise click.BadParameter(f"give a comma-separated list of {what}")
    return items


def _floats(spec: str | None) -> list[float] | None:
    if spec is None:
        return None
    try:
        return [float(x) for x in _list(spec, "strengths")]
    except ValueError:
        raise click.BadParameter("strengths are numbers in (0, 1], e.g. 0.05,0.1,0.2") from None


def _scores_text(rows: list[dict[str, Any]]) -> str:
    head = "threshold\tprecision\trecall\tf1\tari\ttp\tfp\tfn"
    lines = [
        f"{r['threshold']:g}\t{r['precision']:.4f}\t{r['recall']:.4f}\t{r['f1']:.4f}\t"
        f"{r['ari']:.4f}\t{r['tp']}\t{r['fp']}\t{r['fn']}"
        for r in rows
    ]
    return "\n".join([head, *lines]) + "\n"


def _distinct(
    originals: list[Document], method: str, threshold: float, out: dict[str, Any]
) -> list[Document]:
    """The originals less those already near-duplicate of another; warns with the count."""
    from neardup.evaluate import distinct_originals

    distinct = distinct_originals(originals, method, threshold=threshold)
    if distinct.groups:
        n = len(distinct.groups)
        out["excluded_originals"] = {"documents": distinct.dropped, "groups": n}
        click.echo(
            f"neardup: left out {distinct.dropped} of {len(originals)} originals that are "
            f"already near-duplicates of another ({method} at {threshold:g}, {n} "
            f"group{'s' if n > 1 else ''}), so that pairs across groups are false positives",
            err=True,
        )
    return distinct.kept


def _run(
    paths: tuple[str, ...],
    *,
    labels_file: str | None,
    truth: str | None,
    method: str | None,
    threshold: float | None,
    sweep_spec: str | None,
    plot: str | None,
    synthetic: str | None,
    kinds: str | None,
    strengths: str | None,
    sample: int | None,
    seed: int,
    transitive: bool,
    workdir: Path,
    read: dict[str, Any],
    progress: Progress | None = None,
) -> dict[str, Any]:
    from neardup.evaluate import (
        DEFAULT_STRENGTHS,
        IMAGE_KINDS,
        TEXT_KINDS,
        exact_truth,
        lsh_curve,
        lsh_panel,
        parse_range,
        perturbation_report,
        planted_sweep,
        read_labels,
        sample_documents,
        sweep,
        sweep_panel,
        synthetic_images,
        synthetic_text,
        write_svg,
    )

    sources = [x for x in (labels_file, truth, synthetic) if x is not None]
    if len(sources) != 1:
        raise click.UsageError("give exactly one of --labels FILE, --truth exact, --synthetic")
    if transitive and synthetic is not None:
        raise click.UsageError("--transitive goes with --labels or --truth, not --synthetic")
    if threshold is not None and sweep_spec is not None:
        raise click.UsageError("give --threshold or --sweep, not both")
    if plot is not None and Path(plot).suffix.lower() != ".svg":
        raise click.UsageError("--plot writes SVG: name the file *.svg")
    m = method or ("phash" if synthetic == "image" else "minhash")
    thresholds = (
        parse_range(sweep_spec)
        if sweep_spec is not None
        else [DEFAULT_THRESHOLDS[m] if threshold is None else threshold]
    )
    out: dict[str, Any] = {"method": m}
    corpus = None
    binary = m == "phash"
    if synthetic is not None:
        strength_list = _floats(strengths) or list(DEFAULT_STRENGTHS)
        if synthetic == "image":
            originals = sample_documents(
                list(documents(paths, binary=True, images_only=True, **read)), sample or 200
            )
            corpus = synthetic_images(
                [d.path for d in _distinct(originals, m, min(thresholds), out) if d.path],
                out_dir=workdir,
                kinds=_list(kinds, "kinds") or list(IMAGE_KINDS),
                strengths=strength_list,
            )
        else:
            originals = sample_documents(
                list(documents(paths, binary=False, **read)), sample or 200, seed=seed
            )
            corpus = synthetic_text(
                _distinct(originals, m, min(thresholds), out),
                kinds=_list(kinds, "kinds") or list(TEXT_KINDS),
                strengths=strength_list,
                seed=seed,
            )
        docs, labels = corpus.documents, corpus.labels
    elif truth is not None:
        measure: Literal["jaccard", "hamming"] = "hamming" if binary else "jaccard"
        cut = thresholds[0] if binary else DEFAULT_THRESHOLDS["minhash"]
        docs, labels = exact_truth(
            list(documents(paths, binary=binary, images_only=images(m), **read)),
            measure=measure,
            threshold=cut,
            sample=sample or 1000,
            seed=seed,
            method=m,
        )
        out["truth"] = {"measure": measure, "threshold": cut}
    else:
        assert labels_file is not None
        labels = read_labels(labels_file)
        docs = list(documents(paths, binary=binary, images_only=images(m), **read))
    out["documents"] = len(docs)
    scores: list[Any]
    update, close = progress(len(docs)) if progress is not None else (None, lambda: None)
    try:
        if corpus is not None:
            # a suite is scored on the pairs it planted (each variant with its original), not
            # on every pair inside an original's group (see neardup.evaluate.planted)
            out["originals"] = len(corpus.originals)
            out["variants"] = len(corpus.variants)
            scores, run = planted_sweep(corpus, m, thresholds, progress=update)
            out["planted_pairs"] = scores[0].planted
            out["perturbation"] = perturbation_report(
                corpus, m, threshold=thresholds[0], result=run
            ).to_dict()
        else:
            out["true_pairs"] = len(labels.pairs)
            scores = sweep(docs, m, thresholds, labels, transitive=transitive, progress=update)
    finally:
        close()
    out["scores"] = [s.to_dict() for s in scores]
    if plot is not None:
        panels = [sweep_panel(scores, title=f"{m}: precision / recall")]
        if m == "minhash":
            curve = lsh_curve(docs, threshold=thresholds[0], sample=sample or 1000, seed=seed)
            panels.append(lsh_panel(curve))
            out["lsh_curve"] = {
                "bands": curve.bands,
                "rows": curve.rows,
                "bins": [
                    {
                        "lo": b.lo,
                        "hi": b.hi,
                        "pairs": b.pairs,
                        "measured": round(b.measured, 6),
                        "predicted": round(b.predicted, 6),
                    }
                    for b in curve.bins
                ],
            }
        write_svg(panels, plot)
        out["plot"] = plot
    return out


def _planted_text(out: dict[str, Any]) -> list[str]:
    """The headline of a perturbation suite: planted pairs found, reported pairs right."""
    head = "threshold\trecall\tfound\tprecision\treported\tacross"
    rows = [
        f"{r['threshold']:g}\t{r['recall']:.4f}\t{r['found']}/{r['planted']}\t"
        f"{r['precision']:.4f}\t{r['reported']}\t{r['across']}"
        for r in out["scores"]
    ]
    return [
        f"method {out['method']}: {out['originals']} originals and {out['variants']} perturbed "
        f"copies ({out['documents']} documents); {out['planted_pairs']} planted pairs "
        "(each copy with its original)",
        "recall: planted pairs reported; precision: reported pairs whose two documents come "
        "from one original (across: from two, false positives)",
        head,
        *rows,
    ]


def _text(out: dict[str, Any]) -> str:
    if "planted_pairs" in out:
        parts = _planted_text(out)
    else:
        parts = [
            f"method {out['method']}: {out['documents']} documents, {out['true_pairs']} true pairs"
        ]
        if "truth" in out:
            parts.append(f"truth: exact {out['truth']['measure']} >= {out['truth']['threshold']:g}")
        parts.append(_scores_text(out["scores"]).rstrip("\n"))
    if "perturbation" in out:
        p = out["perturbation"]
        parts.append(f"recall per perturbation at threshold {p['threshold']:g}")
        parts.append("kind\tstrength\trecall\tfound")
        parts += [
            f"{r['kind']}\t{r['strength']:g}\t{r['recall']:.3f}\t{r['found']}/{r['variants']}"
            for r in p["recall"]
        ]
        parts.append(
            f"false positives: {p['original_pairs']} pairs among {p['originals']} originals, "
            f"{p['cross_pairs']} across groups"
        )
    if "lsh_curve" in out:
        c = out["lsh_curve"]
        parts.append(f"LSH S-curve ({c['bands']} bands x {c['rows']} rows)")
        parts.append("jaccard\tpairs\tmeasured\tpredicted")
        parts += [
            f"{b['lo']:.2f}-{b['hi']:.2f}\t{b['pairs']}\t{b['measured']:.3f}\t{b['predicted']:.3f}"
            for b in c["bins"]
        ]
    if "plot" in out:
        parts.append(f"plot written to {out['plot']}")
    return "\n".join(parts) + "\n"


@click.command("eval")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option(
    "--labels",
    "labels_file",
    type=click.Path(exists=True, dir_okay=False),
    help="True pairs (JSONL {a,b} / CSV a,b) or cluster ids (JSONL {id,cluster} / CSV).",
)
@click.option(
    "--truth",
    type=click.Choice(["exact"]),
    help="Brute-force labels on a sample: exact word 5-shingle Jaccard >= 0.8 (text) or "
    "pHash Hamming distance within the threshold's radius (images).",
)
@click.option(
    "--method",
    "-m",
    type=click.Choice(EVAL_METHODS),
    help="Method to evaluate [default: minhash; phash with --synthetic image].",
)
@threshold_option("One threshold.")
@click.option(
    "--sweep",
    "sweep_spec",
    metavar="START:STOP:STEP",
    help="Thresholds to sweep from one sketch pass, e.g. 0.5:0.95:0.05 (or a comma list).",
)
@click.option(
    "--plot",
    type=click.Path(dir_okay=False),
    help="Write an SVG: precision/recall/F1 by threshold, and the LSH S-curve for minhash.",
)
@click.option(
    "--synthetic",
    type=click.Choice(["text", "image"]),
    help="Make perturbed copies of the inputs; report the planted pairs (copy, original) "
    "found, the reported pairs' precision, and recall per perturbation.",
)
@click.option("--kinds", help="Perturbation kinds, comma-separated [default: all].")
@click.option("--strengths", help="Perturbation strengths in (0, 1] [default: 0.05,0.1,0.2,0.4].")
@click.option(
    "--sample",
    type=click.IntRange(min=2),
    help="Documents drawn [default: 1000 with --truth exact and for the S-curve; "
    "200 originals with --synthetic].",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of samples and edits.")
@click.option(
    "--transitive",
    is_flag=True,
    help="Score every pair inside a predicted cluster, not only pairs accepted directly.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Output format.",
)
@record_options
@input_options
@input_format_option
@on_error_option
@quiet_option("No model loading bars (embedding).")
@progress_option
@errors
def eval_cmd(
    paths: tuple[str, ...],
    labels_file: str | None,
    truth: str | None,
    method: str | None,
    threshold: float | None,
    sweep_spec: str | None,
    plot: str | None,
    synthetic: str | None,
    kinds: str | None,
    strengths: str | None,
    sample: int | None,
    seed: int,
    transitive: bool,
    fmt: str,
    quiet: bool,
    progress: bool | None,
    **read: Any,
) -> None:
    """Measure precision, recall, F1 and adjusted Rand index of a method on PATH...

    The truth comes from a label file (--labels), from brute force on a sample
    (--truth exact), or from perturbed copies of the inputs (--synthetic text|image).
    """
    quiet_models(quiet, method)
    from neardup.cli.progress import pass_progress

    def bars(total: int) -> tuple[Callable[[str, int], None] | None, Callable[[], None]]:
        return pass_progress(quiet, progress, lambda: total, stages=("sketch",))

    with tempfile.TemporaryDirectory(prefix="neardup-eval-") as tmp:
        out = _run(
            paths,
            labels_file=labels_file,
            truth=truth,
            method=method,
            threshold=threshold,
            sweep_spec=sweep_spec,
            plot=plot,
            synthetic=synthetic,
            kinds=kinds,
            strengths=strengths,
            sample=sample,
            seed=seed,
            transitive=transitive,
            workdir=Path(tmp),
            read=read,
            progress=bars,
        )
    click.echo(
        json.dumps(out, ensure_ascii=False) if fmt == "json" else _text(out), nl=fmt == "json"
    )
