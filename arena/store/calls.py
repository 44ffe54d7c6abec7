"""Running store operations from async code: on the database's own thread(s), timed.

The one path by which the ladder engine (trio, through ``aio_bridge``) and the API handlers
(asyncio) reach the store, so every operation named in ``arena.metrics.STORE_OPERATIONS`` is
timed the same way wherever it is called from.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

from arena.metrics import Metrics
from arena.store.repository import Store

T = TypeVar("T")

TIMED_OPERATIONS = {
    "claim": "claim_match",
    "claim_many": "claim_match",
    "record_result": "record_result",
    "record_results": "record_result",
    "enqueue": "enqueue_matches",
    "enqueue_sets": "enqueue_matches",
    "register_bot": "register_bot",
    "standings": "standings",
    "recover": "recover",
}
"""Store method name → the ``operation`` label it is timed under."""


async def call_store(store: Store, metrics: Metrics, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on the store's executor, awaited on the running asyncio loop."""
    loop = asyncio.get_running_loop()
    started = time.perf_counter()
    try:
        return await loop.run_in_executor(store.db.executor, partial(fn, *args))
    finally:
        operation = TIMED_OPERATIONS.get(getattr(fn, "__name__", ""))
        if operation is not None:
            metrics.store_duration.labels(operation).observe(time.perf_counter() - started)
