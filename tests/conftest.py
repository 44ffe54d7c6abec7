"""Fixtures shared by the test modules: a real store on each backend."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.store.repository import Store
from tests.stores import BACKENDS, open_store, postgres_available


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
