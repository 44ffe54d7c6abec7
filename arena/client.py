"""A small blocking client of the arena API, for the command line and tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cardarena.arena.v1 import arena_service_pb2 as pb
from cardarena.arena.v1 import arena_service_pb2_grpc
from netkit.tls import ClientTls


class ArenaClient:
    """Calls ``ArenaService`` at ``address``; ``token`` (owner or admin) goes in the metadata.

    With ``tls`` the channel is TLS, the server verified against its CA file (or the default
    roots) and host name, a client certificate presented if it names one.
    """

    def __init__(
        self,
        address: str,
        token: str | None = None,
        timeout_s: float = 30.0,
        tls: ClientTls | None = None,
    ) -> None:
        if tls is None:
            self.channel = grpc.insecure_channel(address)
        else:
            self.channel = grpc.secure_channel(address, tls.credentials())
        self.stub = arena_service_pb2_grpc.ArenaServiceStub(self.channel)
        self.token = token
        self.timeout_s = timeout_s

    def _metadata(self, token: str | None = None) -> tuple[tuple[str, str | bytes], ...]:
        token = token or self.token
        return (("authorization", f"Bearer {token}"),) if token else ()

    def call(self, method: str, request: Any, token: str | None = None) -> Any:
        """Call one unary method by name."""
        return getattr(self.stub, method)(
            request, timeout=self.timeout_s, metadata=self._metadata(token)
        )

    def watch(self, match_id: str) -> Iterator[pb.WatchMatchResponse]:
        """Follow a match until it ends."""
        return self.stub.WatchMatch(
            pb.WatchMatchRequest(match_id=match_id), metadata=self._metadata()
        )

    def serving(self) -> bool:
        """Whether the standard health service reports SERVING."""
        stub: Any = health_pb2_grpc.HealthStub(self.channel)
        try:
            response = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
        except grpc.RpcError:
            return False
        return bool(response.status == health_pb2.HealthCheckResponse.SERVING)

    def close(self) -> None:
        """Close the channel."""
        self.channel.close()
