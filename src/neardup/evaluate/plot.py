"""Evaluation plots as SVG, written by hand: precision/recall/F1 against the threshold and
the LSH S-curve (predicted vs measured).

Why a hand-written SVG rather than matplotlib: it adds no dependency (matplotlib is not a core
dependency and pulls in a compiled stack), it is a hundred lines, and its output is byte-for-byte
deterministic (fixed number formatting, no timestamps or font metrics), so plots can be
committed and diffed. Any browser or image viewer opens it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape

from neardup.errors import ConfigError
from neardup.evaluate.scores import Scores
from neardup.evaluate.sweep import LSHCurve

if TYPE_CHECKING:
    from neardup.evaluate.planted import PlantedScores

__all__ = ["Panel", "Series", "lsh_panel", "render_svg", "sweep_panel", "write_svg"]

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
_W, _H = 420, 340
_LEFT, _RIGHT, _TOP, _BOTTOM = 56, 16, 34, 48


@dataclass(frozen=True, slots=True)
class Series:
    """One line of a panel.

    Attributes:
        name: Legend text.
        points: ``(x, y)`` in data units, drawn in order.
        dashed: Draw a dashed line.
        markers: Draw a dot at each point.
    """

    name: str
    points: Sequence[tuple[float, float]]
    dashed: bool = False
    markers: bool = False


@dataclass(frozen=True, slots=True)
class Panel:
    """One chart: axes from ``xlim`` and ``ylim`` (data units), a title and lines."""

    title: str
    xlabel: str
    ylabel: str
    series: Sequence[Series]
    xlim: tuple[float, float] = (0.0, 1.0)
    ylim: tuple[float, float] = field(default=(0.0, 1.0))


def _f(x: float) -> str:
    return f"{x:.2f}"


def _panel(panel: Panel, x0: float) -> list[str]:
    (xa, xb), (ya, yb) = panel.xlim, panel.ylim
    if xb <= xa or yb <= ya:
        raise ConfigError(f"panel {panel.title!r} has an empty axis range; widen xlim/ylim")
    pw, ph = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM

    def sx(x: float) -> float:
        return x0 + _LEFT + (min(max(x, xa), xb) - xa) / (xb - xa) * pw

    def sy(y: float) -> float:
        return _TOP + ph - (min(max(y, ya), yb) - ya) / (yb - ya) * ph

    out = [
        f'<g class="panel"><text x="{_f(x0 + _W / 2)}" y="20" text-anchor="middle" '
        f'font-size="14">{escape(panel.title)}</text>',
        f'<rect x="{_f(x0 + _LEFT)}" y="{_TOP}" width="{pw}" height="{ph}" fill="none" '
        'stroke="#333"/>',
    ]
    for k in range(6):
        gx, gy = xa + (xb - xa) * k / 5, ya + (yb - ya) * k / 5
        out.append(
            f'<line x1="{_f(sx(gx))}" y1="{_TOP}" x2="{_f(sx(gx))}" y2="{_TOP + ph}" '
            'stroke="#ddd"/>'
            f'<text x="{_f(sx(gx))}" y="{_TOP + ph + 16}" text-anchor="middle" '
            f'font-size="11">{gx:.2f}</text>'
            f'<line x1="{_f(x0 + _LEFT)}" y1="{_f(sy(gy))}" x2="{_f(x0 + _LEFT + pw)}" '
            f'y2="{_f(sy(gy))}" stroke="#ddd"/>'
            f'<text x="{_f(x0 + _LEFT - 6)}" y="{_f(sy(gy) + 4)}" text-anchor="end" '
            f'font-size="11">{gy:.2f}</text>'
        )
    out.append(
        f'<text x="{_f(x0 + _LEFT + pw / 2)}" y="{_H - 10}" text-anchor="middle" '
        f'font-size="12">{escape(panel.xlabel)}</text>'
        f'<text x="{_f(x0 + 14)}" y="{_f(_TOP + ph / 2)}" text-anchor="middle" font-size="12" '
        f'transform="rotate(-90 {_f(x0 + 14)} {_f(_TOP + ph / 2)})">{escape(panel.ylabel)}</text>'
    )
    for n, s in enumerate(panel.series):
        color = PALETTE[n % len(PALETTE)]
        pts = " ".join(f"{_f(sx(x))},{_f(sy(y))}" for x, y in s.points)
        dash = ' stroke-dasharray="6 4"' if s.dashed else ""
        if len(s.points) > 1:
            out.append(
                f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="2"{dash}>'
                f"<title>{escape(s.name)}</title></polyline>"
            )
        if s.markers:
            out.extend(
                f'<circle cx="{_f(sx(x))}" cy="{_f(sy(y))}" r="3" fill="{color}"/>'
                for x, y in s.points
            )
        ly = _TOP + 14 + 16 * n
        out.append(
            f'<line x1="{_f(x0 + _LEFT + 10)}" y1="{ly - 4}" x2="{_f(x0 + _LEFT + 30)}" '
            f'y2="{ly - 4}" stroke="{color}" stroke-width="2"{dash}/>'
            f'<text x="{_f(x0 + _LEFT + 36)}" y="{ly}" font-size="11">{escape(s.name)}</text>'
        )
    out.append("</g>")
    return out


def render_svg(panels: Sequence[Panel]) -> str:
    """An SVG document with the panels side by side.

    Raises:
        ConfigError: no panels, or a panel with an empty axis range.

    Examples:
        >>> svg = render_svg([Panel("t", "x", "y", [Series("a", [(0, 0), (1, 1)])])])
        >>> svg.startswith("<svg") and "<polyline" in svg
        True
    """
    if not panels:
        raise ConfigError("nothing to plot: give at least one panel")
    width = _W * len(panels)
    body = [line for k, p in enumerate(panels) for line in _panel(p, k * _W)]
    return "\n".join(
        [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{_H}" '
            f'viewBox="0 0 {width} {_H}" font-family="sans-serif">',
            f'<rect width="{width}" height="{_H}" fill="white"/>',
            *body,
            "</svg>",
            "",
        ]
    )


def write_svg(panels: Sequence[Panel], path: str | Path) -> None:
    """Write :func:`render_svg` of the panels to ``path`` (UTF-8).

    Raises:
        OutputError: the file cannot be written (a missing or read-only folder, a full disk);
            it is written under a temporary name and renamed, so no partial plot is left.
    """
    from neardup._atomic import atomic_file

    with atomic_file(Path(path)) as tmp:
        tmp.write_text(render_svg(panels), encoding="utf-8")


def sweep_panel(
    scores: Sequence[Scores | PlantedScores], *, title: str = "precision / recall"
) -> Panel:
    """Precision, recall and F1 against the threshold.

    Examples:
        >>> from neardup.evaluate.scores import Scores
        >>> p = sweep_panel([Scores(1, 0, 1, 1.0, 0.5, 0.667, 0.5, 4, 0.8)])
        >>> [s.name for s in p.series]
        ['precision', 'recall', 'F1']
    """
    ts = [s.threshold if s.threshold is not None else 0.0 for s in scores]
    lo, hi = (min(ts), max(ts)) if ts else (0.0, 1.0)
    if hi - lo < 1e-9:
        lo, hi = max(0.0, lo - 0.05), min(1.0, hi + 0.05)
    return Panel(
        title,
        "threshold",
        "score",
        [
            Series(
                "precision",
                [(t, s.precision) for t, s in zip(ts, scores, strict=True)],
                markers=True,
            ),
            Series(
                "recall", [(t, s.recall) for t, s in zip(ts, scores, strict=True)], markers=True
            ),
            Series("F1", [(t, s.f1) for t, s in zip(ts, scores, strict=True)], dashed=True),
        ],
        xlim=(lo, hi),
    )


def lsh_panel(curve: LSHCurve) -> Panel:
    """The S-curve: predicted candidate probability (line) and measured rates (dots; bins
    without pairs are left out)."""
    measured = [((b.lo + b.hi) / 2, b.measured) for b in curve.bins if b.pairs]
    return Panel(
        f"MinHash LSH {curve.bands}x{curve.rows} (t={curve.threshold:g})",
        "exact Jaccard",
        "P(candidate)",
        [
            Series("predicted", curve.predicted),
            Series("measured", measured, markers=True, dashed=True),
        ],
    )
