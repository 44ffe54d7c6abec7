"""``arena serve``: the arena API, health checking, reflection (arena/reflection.py), metrics
and the ladder engine.

One process: an asyncio host loop owns every gRPC object (the API server, the in-process house
random bot used for validation, the channels to bots), and trio runs the ladder engine as its
guest (see ``referee.aio_bridge``). SIGINT/SIGTERM stop it gracefully: matches in flight end at
their next move and go back to the queue, within ``shutdown_grace_s``; whatever is still running
then is cancelled and requeued at the next start (leases).

It owns its port and its SQLite file: a port in use (no SO_REUSEPORT) or a database another
process holds ends it at start-up with ``ListenError``/``DatabaseInUse``. The API may serve
TLS (``ServeOptions.tls``); ``tls://`` bot endpoints are dialled with ``ServeOptions.bot_tls``.
Every unary-request method is behind ``RequestGuard``: malformed bytes get INVALID_ARGUMENT.
"""

from __future__ import annotations

import dataclasses
import logging
import signal
import socket
from collections.abc import Callable
from dataclasses import dataclass, field

import grpc
import grpc.aio
import trio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from prometheus_client import start_http_server

from arena.bot_relay import (
    RELAY_METHOD,
    StreamRegistry,
    relay_bot_handler,
    relay_dialer,
    store_locator,
)
from arena.endpoint_guard import GuardPolicy
from arena.endpoint_resolver import EndpointGuard
from arena.house_bot import start_house_bot
from arena.ladder import Arena, ArenaConfig
from arena.limits import ApiLimits, LimitInterceptor, LimitsConfig
from arena.metrics import Metrics
from arena.peers import PeerChannels
from arena.reflection import HealthServicer, enable_reflection
from arena.rpc_errors import RateLimitedLog, RequestGuard
from arena.service import ArenaServicer
from arena.store.db import Database, open_database
from arena.store.repository import Store
from arena.web.server import bind, serve_web
from cardarena.arena.v1 import arena_service_pb2, arena_service_pb2_grpc
from netkit.listen import SERVER_OPTIONS, ListenError, add_port
from netkit.tls import ClientTls, ServerTls
from referee.aio_bridge import await_aio
from referee.bot_client import BotPool
from referee.bot_stream import CONNECT_METHOD, CONNECT_SERVICE, StreamBot, connect_bot_handler
from referee.games.registry import STATE_CLASSES

log = logging.getLogger("arena.server")
SERVICE_NAME = arena_service_pb2.DESCRIPTOR.services_by_name["ArenaService"].full_name
LIVENESS = "liveness"
"""The health service that stays SERVING until the process exits (a liveness probe's):
the others ("" and the API's) turn NOT_SERVING as soon as the process starts draining."""
READINESS = ("", SERVICE_NAME)


def _stream_bot(pool: BotPool, bot_id: str) -> StreamBot | None:
    """The outbound bot's StreamBot in this process, if it has one."""
    found = pool.peek(f"outbound://{bot_id}")
    return found if isinstance(found, StreamBot) else None


@dataclass(frozen=True)
class ServeOptions:
    """Where and how ``arena serve`` runs."""

    listen: str = "127.0.0.1:50050"
    metrics_listen: str | None = "127.0.0.1:9464"
    database: str = "arena.sqlite3"
    admin_token: str = ""
    shutdown_grace_s: float = 10.0
    endpoint_policy: GuardPolicy = field(default_factory=GuardPolicy)
    """Which bot endpoints the arena calls (on by default: public addresses only); the
    arena's own listening sockets are added once bound."""
    arena: ArenaConfig = field(default_factory=ArenaConfig)
    tls: ServerTls | None = None
    """TLS for the API (certificate, key, optional client CA for mutual TLS); None: plaintext."""
    bot_tls: ClientTls | None = None
    """What ``tls://`` bot endpoints are verified against, and the client certificate shown."""
    limits: LimitsConfig = field(default_factory=LimitsConfig)
    peer_tls: ClientTls | None = None
    """TLS for calls to the other arena processes' APIs (a relayed WatchMatch), when they
    serve TLS: the CA they are verified against and this process's client certificate."""
    web_listen: str | None = None
    """host:port of the web UI (``arena.web``); None: no web UI (``arena serve``'s
    ``--web-listen`` defaults to 127.0.0.1:8080)."""


async def serve(
    options: ServeOptions,
    *,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
    web_started: Callable[[str], None] | None = None,
) -> None:
    """Run until cancelled or signalled; ``task_status.started`` gets the API's host:port,
    and ``web_started`` the web UI's URL (before it) when there is one."""
    pool = BotPool(tls=options.bot_tls)  # checks the TLS files before anything starts
    peers = PeerChannels(options.peer_tls)  # and the TLS files for the other processes
    database = open_database(options.database)  # DatabaseInUse if another arena has it
    server: grpc.aio.Server | None = None
    house_server: grpc.aio.Server | None = None
    web_socket: socket.socket | None = None
    try:
        store = Store(database)
        metrics = Metrics(STATE_CLASSES)
        guard = EndpointGuard(options.endpoint_policy)
        limits = ApiLimits(options.limits)  # rate limits: one interceptor for every API call
        server = grpc.aio.server(
            options=SERVER_OPTIONS,
            interceptors=[  # the first is outermost: a refused call costs no parsing
                LimitInterceptor(limits, options.admin_token),
                RequestGuard(RateLimitedLog(logging.getLogger("arena.requests"))),
            ],
        )
        api_port = add_port(server, options.listen, options.tls)
        if options.metrics_listen:
            metrics_host, metrics_port = _serve_metrics(options.metrics_listen)
            guard.add_own_socket(metrics_host, metrics_port)
        if options.web_listen:
            web_socket = bind(options.web_listen)
            guard.add_own_socket(*web_socket.getsockname()[:2])
        house_server, house_address = await await_aio(start_house_bot)
        guard.add_own_socket(*_host_port(house_address))
        address = f"{options.listen.rsplit(':', 1)[0]}:{api_port}"
        config = options.arena
        if not config.advertise_address:
            config = dataclasses.replace(config, advertise_address=advertised(address))
        arena = Arena(store, pool, metrics, house_address, config, guard)
        servicer = ArenaServicer(store, arena, options.admin_token, limits, peers)
        arena_service_pb2_grpc.add_ArenaServiceServicer_to_server(servicer, server)
        # ConnectBot and RelayBot in bytes (issue 20): registered over the generated handlers.
        registry = StreamRegistry(store, arena.coordination, config.worker_id, metrics)
        pool.outbound_dial = relay_dialer(store_locator(registry), peers, options.admin_token)
        server.add_registered_method_handlers(
            CONNECT_SERVICE,
            {
                CONNECT_METHOD: connect_bot_handler(
                    servicer.accept_bot_stream, registry.opened, registry.closed
                ),
                RELAY_METHOD: relay_bot_handler(
                    lambda bot_id: _stream_bot(pool, bot_id), servicer.is_admin
                ),
            },
        )
        health_servicer = HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        enable_reflection((SERVICE_NAME, health.SERVICE_NAME), server)  # v1 and v1alpha
        await await_aio(server.start)
        guard.add_own_socket(*_host_port(address))
    except BaseException:
        if web_socket is not None:
            web_socket.close()
        with trio.CancelScope(shield=True):
            await _stop(server, house_server, pool, database, peers)
        raise
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(arena.run)  # WorkerIdInUse if a live process has the id
            if web_socket is not None:
                url = await nursery.start(serve_web, servicer, web_socket)
                web_socket = None  # serve_web owns it now
                log.info("web UI on %s", url)
                if web_started is not None:
                    web_started(url)
            await _set_health(health_servicer, (LIVENESS, *READINESS), serving=True)
            log.info(
                "arena serving on %s as worker %s (roles: %s)",
                address,
                config.worker_id,
                ", ".join(config.roles) or "api only",
            )
            task_status.started(address)
            nursery.start_soon(_stop_on_signal, arena)
            await arena.stop.wait()
            await _set_health(health_servicer, READINESS, serving=False)  # draining: not ready
            log.info("stopping: matches in flight end at their next move and are requeued")
            with trio.move_on_after(options.shutdown_grace_s) as grace:
                await arena.finished.wait()
            if grace.cancelled_caught:
                log.warning(
                    "still running after the grace period, requeued by any live process: %s",
                    ", ".join(arena.live),
                )
            nursery.cancel_scope.cancel()
    finally:
        if web_socket is not None:
            web_socket.close()
        with trio.CancelScope(shield=True):
            await _set_health(health_servicer, (LIVENESS, *READINESS), serving=False)
            await _stop(server, house_server, pool, database, peers)


async def _set_health(
    servicer: health.aio.HealthServicer, services: tuple[str, ...], *, serving: bool
) -> None:
    status = (
        health_pb2.HealthCheckResponse.SERVING
        if serving
        else health_pb2.HealthCheckResponse.NOT_SERVING
    )
    for name in services:
        await await_aio(lambda name=name: servicer.set(name, status))  # type: ignore[misc]


def advertised(address: str) -> str:
    """Where other processes reach an API listening on ``address``: itself, or this host's
    name when it listens on every interface."""
    host, port = _host_port(address)
    if host.strip("[]") in ("0.0.0.0", "::", ""):
        return f"{socket.gethostname()}:{port}"
    return address


def _serve_metrics(listen: str) -> tuple[str, int]:
    """Start the Prometheus /metrics endpoint on ``listen`` (host:port); the host and the
    port it got."""
    host, _, port = listen.rpartition(":")
    host = host.strip("[]")
    try:
        metrics_server, _ = start_http_server(int(port), addr=host)
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise ListenError(f"cannot serve metrics on {listen}: {reason}") from None
    return host, int(metrics_server.server_port)


async def _stop(
    server: grpc.aio.Server | None,
    house_server: grpc.aio.Server | None,
    pool: BotPool,
    database: Database,
    peers: PeerChannels | None = None,
) -> None:
    """Stop what ``serve`` started, the API first."""
    if server is not None:
        await await_aio(lambda: server.stop(1.0))
    if peers is not None:
        await await_aio(peers.close)
    if house_server is not None:
        await await_aio(lambda: house_server.stop(0.5))
    await pool.close()
    database.close()


def _host_port(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host, int(port)


async def _stop_on_signal(arena: Arena) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            arena.stop.set()
            return
