"""Results of a dedup run and their writers: JSONL, CSV and text here, HTML in ``report.html``.

``results`` holds the value types (:class:`Pair`, :class:`Cluster`, :class:`DedupResult`),
``writers`` the stream writers, and ``html`` the self-contained HTML report
(:func:`~neardup.report.html.write_html`), imported only when asked for.
"""

from __future__ import annotations

from neardup.report.results import Cluster, DedupResult, Pair, PairList
from neardup.report.writers import OutputFormat, write_clusters, write_pairs

__all__ = [
    "Cluster",
    "DedupResult",
    "OutputFormat",
    "Pair",
    "PairList",
    "write_clusters",
    "write_pairs",
]
