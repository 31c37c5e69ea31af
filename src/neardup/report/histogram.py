"""The report's histogram of pair similarities: inline SVG, axes labelled, threshold marked."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from neardup.report.results import Pair, PairList

__all__ = ["histogram_svg"]

_HIST_BINS = 20


def histogram_svg(pairs: Sequence[Pair], threshold: float) -> str:
    """An inline SVG histogram of pair similarities, axes labelled, the threshold marked.

    Examples:
        >>> svg = histogram_svg([Pair("a", "b", 0.9), Pair("a", "c", 0.95)], 0.8)
        >>> svg.count("<rect"), "threshold 0.800" in svg
        (20, True)
    """
    if not pairs:
        return '<p id="histogram" class="more">No pairs, so there is nothing to plot.</p>'
    if isinstance(pairs, PairList):
        sims = np.array(pairs.arrays[2], dtype=np.float64)
    else:
        sims = np.fromiter((p.similarity for p in pairs), dtype=np.float64, count=len(pairs))
    sims = np.clip(np.nan_to_num(sims, nan=0.0, posinf=1.0, neginf=0.0), 0.0, 1.0)
    lo = min(float(sims.min()), min(max(threshold, 0.0), 1.0))
    lo = min(int(lo * _HIST_BINS) / _HIST_BINS, 1.0 - 1.0 / _HIST_BINS)
    width = (1.0 - lo) / _HIST_BINS
    bins = np.minimum(((sims - lo) / width + 1e-9).astype(np.int64), _HIST_BINS - 1)  # 1e-9: 0.99
    counts = np.bincount(np.maximum(bins, 0), minlength=_HIST_BINS).tolist()
    top = max(counts)
    w, h, left, bottom, pad = 720, 250, 64, 46, 12
    plot_w, plot_h = w - left - pad, h - bottom - pad
    bar_w = plot_w / _HIST_BINS
    parts = [
        f'<svg id="histogram" viewBox="0 0 {w} {h}" width="100%" role="img" '
        'aria-labelledby="histogram-title histogram-desc" xmlns="http://www.w3.org/2000/svg">',
        '<title id="histogram-title">Histogram of pair similarities</title>',
        f'<desc id="histogram-desc">{len(pairs)} pairs in {_HIST_BINS} bins from {lo:.2f} to '
        f"1.00; the tallest bin holds {top}; the dashed line is the threshold "
        f"{threshold:.3f}.</desc>",
        f'<line x1="{left}" y1="{pad + plot_h}" x2="{w - pad}" y2="{pad + plot_h}" '
        'stroke="#8c959f"/>',
        f'<line x1="{left}" y1="{pad}" x2="{left}" y2="{pad + plot_h}" stroke="#8c959f"/>',
    ]
    for i, n in enumerate(counts):
        bar_h = plot_h * n / top
        a, b = lo + i * width, lo + (i + 1) * width
        parts.append(
            f'<rect x="{left + i * bar_w + 1:.1f}" y="{pad + plot_h - bar_h:.1f}" '
            f'width="{bar_w - 2:.1f}" height="{bar_h:.1f}" fill="#3b82c4">'
            f"<title>{a:.3f} to {b:.3f}: {n} pairs</title></rect>"
        )
    for frac in (0.0, 0.25, 0.5, 0.75, 1.0):
        x = left + plot_w * frac
        parts.append(
            f'<text x="{x:.1f}" y="{pad + plot_h + 16}" text-anchor="middle">'
            f"{lo + (1 - lo) * frac:.2f}</text>"
        )
    for frac in (0.0, 0.5, 1.0):
        y = pad + plot_h * (1 - frac)
        parts.append(
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{round(top * frac):,}</text>'
        )
    parts += [
        f'<text x="{left + plot_w / 2:.1f}" y="{h - 4}" text-anchor="middle">'
        "similarity of the pair</text>",
        f'<text x="14" y="{pad + plot_h / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 14 {pad + plot_h / 2:.1f})">pairs</text>',
    ]
    if lo <= threshold <= 1.0:
        tx = left + plot_w * (threshold - lo) / (1 - lo)
        parts.append(
            f'<line x1="{tx:.1f}" y1="{pad}" x2="{tx:.1f}" y2="{pad + plot_h}" '
            'stroke="#cf222e" stroke-dasharray="4 3"><title>threshold '
            f"{threshold:.3f}</title></line>"
        )
    parts.append("</svg>")
    return "\n".join(parts)
