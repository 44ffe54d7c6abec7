"""What standard gRPC tools ask an ``arena serve`` first: server reflection and health.

Reflection is served as ``grpc.reflection.v1`` (current grpcurl and ``buf curl`` ask for it
first) and ``grpc.reflection.v1alpha`` (older tools), by one servicer: grpcio-reflection's,
which ships only v1alpha. v1 is v1alpha renamed, the same messages with the same field numbers
(``proto_vendor/grpc/reflection/v1/reflection.proto``; tests/test_reflection.py checks), so the
v1 method reads and writes the very same bytes with the v1alpha message classes.

The health service answers each method it advertises: Check and Watch (grpcio-health-checking)
and List, which that package's servicer leaves UNIMPLEMENTED.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import grpc
import grpc.aio
from grpc_health.v1 import health, health_pb2
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc

from cardarena.vendor.grpc.reflection.v1 import reflection_pb2 as reflection_v1_pb2

V1_SERVICE_NAME = reflection_v1_pb2.DESCRIPTOR.services_by_name["ServerReflection"].full_name
V1ALPHA_SERVICE_NAME = reflection.SERVICE_NAME


def enable_reflection(service_names: Iterable[str], server: grpc.aio.Server) -> None:
    """Serve reflection v1 and v1alpha on ``server``, listing ``service_names`` and both
    reflection services."""
    names = (*service_names, V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME)
    servicer: Any = reflection.aio.ReflectionServicer(names)
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
    v1 = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(V1_SERVICE_NAME, {"ServerReflectionInfo": v1}),)
    )


HEALTH_PB2: Any = health_pb2
"""``health_pb2`` as Any: the typeshed stubs predate List's messages, the module has them."""


class HealthServicer(health.aio.HealthServicer):
    """grpcio-health-checking's servicer, with the List method it advertises."""

    async def List(self, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        """Every service's status now (a snapshot; Watch follows one)."""
        statuses = dict(vars(self)["_server_status"])  # the parent's statuses by service
        return HEALTH_PB2.HealthListResponse(
            statuses={
                name: health_pb2.HealthCheckResponse(status=status)
                for name, status in statuses.items()
            }
        )
