"""Fixtures of the client's tests: a real edge-sandbox service, named by EDGE_SANDBOX_URL and
EDGE_SANDBOX_TOKEN (the repository's test/stack/python-client.test.ts starts one and runs these
tests against it), fresh sandboxes, the cutting proxy in front of the service
(EDGE_SANDBOX_CUT_URL) that breaks event streams at random bytes, and one whose first connection
loses its answer (EDGE_SANDBOX_LOSING_URL).

With EDGE_SANDBOX_TEST_REPORT set, each test's outcome is written there as a line of JSON, for
the runner to report test by test.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator

import pytest

from edge_sandbox import Sandbox


def _required(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise pytest.UsageError(f"{name} is not set: these tests run against a real service")
    return value


@pytest.fixture(scope="session")
def service() -> dict[str, str]:
    """The service's URL and token."""
    return {"url": _required("EDGE_SANDBOX_URL"), "token": _required("EDGE_SANDBOX_TOKEN")}


@pytest.fixture(scope="session")
def cut_url() -> str:
    """The cutting proxy in front of the service."""
    return _required("EDGE_SANDBOX_CUT_URL")


@pytest.fixture(scope="session")
def losing_url() -> str:
    """A proxy in front of the service whose first connection loses its answer (the request went on)."""
    return _required("EDGE_SANDBOX_LOSING_URL")


def unique_id(label: str) -> str:
    """A sandbox id no other test uses."""
    return f"py-{label}-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="module")
def sandbox(service: dict[str, str], request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """A fresh sandbox per test module, destroyed after it."""
    with Sandbox(unique_id(request.module.__name__.removeprefix("test_").replace("_", "-")), service["url"], service["token"]) as sandbox:
        yield sandbox
        sandbox.destroy()


@pytest.fixture
def async_sandbox_id(service: dict[str, str]) -> Iterator[str]:
    """A fresh sandbox id for an async test, destroyed after it."""
    sandbox_id = unique_id("async")
    yield sandbox_id
    with Sandbox(sandbox_id, service["url"], service["token"]) as sandbox:
        sandbox.destroy()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    path = os.environ.get("EDGE_SANDBOX_TEST_REPORT")
    if not path or (report.when != "call" and report.passed):
        return
    if report.when == "call" or report.failed or report.skipped:
        entry = {"nodeid": report.nodeid, "when": report.when, "outcome": report.outcome, "details": str(report.longrepr or "")[-4000:]}
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")

