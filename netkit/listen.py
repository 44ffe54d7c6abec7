"""Listening for gRPC servers (bots, the arena API, benchmarks): one process per port, and a
port that cannot be bound said in one line."""

from __future__ import annotations

import errno
import socket

import grpc
import grpc.aio

from netkit.tls import ServerTls

SERVER_OPTIONS: tuple[tuple[str, int], ...] = (
    # One process per port: grpc sets SO_REUSEPORT by default, so a second server on a port in
    # use would start silently and the kernel would split the connections between the two.
    ("grpc.so_reuseport", 0),
)
"""Options of every gRPC server in the project (bots, the arena API, benchmarks)."""


class ListenError(OSError):
    """A server cannot listen where it was told to (the port in use, an address not local)."""


def add_port(server: grpc.aio.Server, address: str, tls: ServerTls | None = None) -> int:
    """Listen on ``address`` (plaintext, or TLS); the port, or ``ListenError`` saying why not."""
    credentials = None if tls is None else tls.credentials()
    # A plain bind first says why in one line (grpc logs its own lines and says only "Failed
    # to bind"); grpc's own bind still decides.
    reason = _why_not_bindable(address)
    if reason is None:
        try:
            if credentials is None:
                port = server.add_insecure_port(address)
            else:
                port = server.add_secure_port(address, credentials)
        except RuntimeError:
            port = 0
        if port:
            return port
        reason = _why_not_bindable(address) or "refused by gRPC (see its log line above)"
    raise ListenError(f"cannot listen on {address}: {reason}")


def _why_not_bindable(address: str) -> str | None:
    """Why a TCP socket cannot bind ``address`` as grpc would (SO_REUSEADDR, no SO_REUSEPORT)."""
    host, _, port = address.rpartition(":")
    try:
        family, kind, proto, _, where = socket.getaddrinfo(
            host.strip("[]") or None, int(port), type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(where)
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            return f"{error.strerror} (another process listens there)"
        return error.strerror or str(error)
    except ValueError:
        return "expected host:port"
    return None
