"""Fixtures shared by the test modules: a real store on each backend."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena import local_bots
from arena.store.repository import Store
from tests.stores import BACKENDS, open_store, postgres_available

PATIENT_STARTUP_S = 120.0
"""How long a test waits for a process it starts to listen: an ``arena serve`` that migrates
its store takes seconds alone, and far longer on a CI machine loaded with the suite's other
processes (30 s, the CLI's patience, was exceeded there)."""


@pytest.fixture(autouse=True, scope="session")
def patient_startup() -> Iterator[None]:
    """Every process a test starts may take ``PATIENT_STARTUP_S`` to listen."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(local_bots, "STARTUP_TIMEOUT_S", PATIENT_STARTUP_S)
        yield


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A migrated store on SQLite, then on PostgreSQL (skipped without a server, except in CI,
    where it must be there)."""
    if request.param == "postgres" and not postgres_available():
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL at 127.0.0.1:5432 is not reachable in CI")
        pytest.skip("no PostgreSQL server reachable")
    with open_store(request.param, tmp_path) as opened:
        yield opened
