"""The service's counters, written in the Prometheus text format (version 0.0.4) by hand.

A dozen lines of text need no dependency: ``prometheus_client`` would add a package to the
``serve`` extra and a process-wide default registry (two services in one process, as in the
tests, would share their counters). Every update takes one lock; the event loop, the reader
threads and the writer thread all count.
"""

from __future__ import annotations

import bisect
import threading
import time
from collections import defaultdict

__all__ = ["BUCKETS", "CONTENT_TYPE", "Metrics"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Upper bounds (seconds) of the request latency histogram's buckets (``+Inf`` added)."""


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class Metrics:
    """Requests by endpoint and status, latency histograms by endpoint, documents by outcome,
    group commits, and gauges read when scraped.

    Examples:
        >>> m = Metrics()
        >>> m.request("/v1/check", "POST", 200, 0.003)
        >>> m.documents("added", 2)
        >>> text = m.render({"neardup_store_documents": 2})
        >>> 'neardup_requests_total{endpoint="/v1/check",method="POST",status="200"} 1' in text
        True
        >>> 'neardup_documents_total{outcome="added"} 2' in text
        True
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._started = time.time()
        self._requests: dict[tuple[str, str, int], int] = defaultdict(int)
        self._latency: dict[str, list[int]] = {}
        self._latency_sum: dict[str, float] = defaultdict(float)
        self._documents: dict[str, int] = defaultdict(int)
        self._commits = 0
        self._commit_docs = 0
        self._commit_seconds = 0.0

    def request(self, endpoint: str, method: str, status: int, seconds: float) -> None:
        """Count one answered request."""
        at = bisect.bisect_left(BUCKETS, seconds)
        with self._lock:
            self._requests[(endpoint, method, status)] += 1
            counts = self._latency.get(endpoint)
            if counts is None:
                counts = self._latency[endpoint] = [0] * (len(BUCKETS) + 1)
            counts[at] += 1
            self._latency_sum[endpoint] += seconds

    def documents(self, outcome: str, n: int) -> None:
        """Count documents: ``added``, ``skipped`` (a duplicate not added), ``queried``,
        ``deleted``."""
        if n:
            with self._lock:
                self._documents[outcome] += n

    def commit(self, docs: int, seconds: float) -> None:
        """Count one group commit of ``docs`` documents that took ``seconds``."""
        with self._lock:
            self._commits += 1
            self._commit_docs += docs
            self._commit_seconds += seconds

    def snapshot(self) -> dict[str, float]:
        """The totals that ``/v1/stats`` shows."""
        with self._lock:
            requests = sum(self._requests.values())
            return {
                "uptime_seconds": round(time.time() - self._started, 3),
                "requests": requests,
                "documents_added": self._documents["added"],
                "documents_skipped": self._documents["skipped"],
                "documents_queried": self._documents["queried"],
                "documents_deleted": self._documents["deleted"],
                "group_commits": self._commits,
            }

    def render(self, gauges: dict[str, float]) -> str:
        """The Prometheus text: every counter, then ``gauges`` (name -> value)."""
        lines: list[str] = []
        with self._lock:
            lines += [
                "# HELP neardup_requests_total HTTP requests answered, by endpoint and status.",
                "# TYPE neardup_requests_total counter",
            ]
            for (endpoint, method, status), n in sorted(self._requests.items()):
                lines.append(
                    f'neardup_requests_total{{endpoint="{_label(endpoint)}",'
                    f'method="{method}",status="{status}"}} {n}'
                )
            lines += [
                "# HELP neardup_request_duration_seconds Time from request to answer.",
                "# TYPE neardup_request_duration_seconds histogram",
            ]
            for endpoint, counts in sorted(self._latency.items()):
                label = f'endpoint="{_label(endpoint)}"'
                total = 0
                for bound, n in zip((*map(str, BUCKETS), "+Inf"), counts, strict=True):
                    total += n
                    lines.append(
                        f'neardup_request_duration_seconds_bucket{{{label},le="{bound}"}} {total}'
                    )
                lines.append(
                    f"neardup_request_duration_seconds_sum{{{label}}} "
                    f"{self._latency_sum[endpoint]:.6f}"
                )
                lines.append(f"neardup_request_duration_seconds_count{{{label}}} {total}")
            lines += [
                "# HELP neardup_documents_total Documents handled, by outcome.",
                "# TYPE neardup_documents_total counter",
            ]
            for outcome in ("added", "skipped", "queried", "deleted"):
                lines.append(
                    f'neardup_documents_total{{outcome="{outcome}"}} {self._documents[outcome]}'
                )
            lines += [
                "# HELP neardup_group_commits_total Write transactions committed.",
                "# TYPE neardup_group_commits_total counter",
                f"neardup_group_commits_total {self._commits}",
                "# HELP neardup_group_commit_documents_total Documents in those commits.",
                "# TYPE neardup_group_commit_documents_total counter",
                f"neardup_group_commit_documents_total {self._commit_docs}",
                "# HELP neardup_group_commit_seconds_total Time spent checking and committing.",
                "# TYPE neardup_group_commit_seconds_total counter",
                f"neardup_group_commit_seconds_total {self._commit_seconds:.6f}",
            ]
        for name, value in sorted(gauges.items()):
            lines += [f"# TYPE {name} gauge", f"{name} {value:g}"]
        return "\n".join(lines) + "\n"
