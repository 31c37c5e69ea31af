"""schemathesis against the OpenAPI document: generated requests, valid and invalid, never get
a 500, and every answer matches the documented status codes, content types and schemas."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .serving import Running, start_thread_server

httpx = pytest.importorskip("httpx")

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, settings  # noqa: E402

from neardup.serve.config import Limits  # noqa: E402
from neardup.serve.openapi import openapi  # noqa: E402

LIMITS = Limits(max_documents=16, queue_documents=4096)
DOCUMENT = openapi(method="minhash", images=False, limits=LIMITS, secured=False, version="test")
# a request over a size limit is 413 (the interface), which schemathesis does not
# expect for data its schema forbids (more documents than maxItems)
CONFIG = schemathesis.config.SchemathesisConfig.from_dict(
    {
        "checks": {
            "negative_data_rejection": {
                "expected-statuses": ["400", "401", "403", "404", "405", "413", "415"]
            }
        }
    }
)
schema = schemathesis.openapi.from_dict(DOCUMENT, config=CONFIG)


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    path = Path(tmp_path_factory.mktemp("schemathesis")) / "s.db"
    run = start_thread_server(path, limits=LIMITS)
    try:
        yield run
    finally:
        run.stop()


def test_the_service_serves_this_document(running: Running) -> None:
    served = httpx.get(f"{running.url}/openapi.json", timeout=120).json()
    assert served["paths"] == DOCUMENT["paths"]
    assert served["components"] == DOCUMENT["components"]


@schema.parametrize()
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), database=None)
def test_api_conforms(case: object, running: Running) -> None:
    # a generous timeout: a loaded CI machine may take seconds to answer
    case.call_and_validate(base_url=running.url, timeout=120)  # type: ignore[attr-defined]
