"""Standard tooling against a real ``arena serve``: server reflection v1 (what grpcurl and buf
curl ask for first) and v1alpha list and describe the whole API, and the health service
answers each method it advertises (Check, Watch, List)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2 as v1alpha

from arena.reflection import V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME
from cardarena.vendor.grpc.reflection.v1 import reflection_pb2 as v1
from tests.test_operating import arena

ARENA = "cardarena.arena.v1.ArenaService"
HEALTH = "grpc.health.v1.Health"


def ask(channel: grpc.Channel, module: Any, service: str, *requests: Any) -> list[Any]:
    """The answers of one reflection stream of ``service`` (v1 or v1alpha messages)."""
    call = channel.stream_stream(
        f"/{service}/ServerReflectionInfo",
        request_serializer=module.ServerReflectionRequest.SerializeToString,
        response_deserializer=module.ServerReflectionResponse.FromString,
    )
    return list(call(iter(requests), timeout=10))


def test_reflection_v1_and_v1alpha_list_and_describe_the_whole_api(tmp_path: Path) -> None:
    with arena(tmp_path) as service, grpc.insecure_channel(service.address) as channel:
        for module, name in ((v1, V1_SERVICE_NAME), (v1alpha, V1ALPHA_SERVICE_NAME)):
            listed, described = ask(
                channel,
                module,
                name,
                module.ServerReflectionRequest(list_services=""),
                module.ServerReflectionRequest(file_containing_symbol=ARENA),
            )
            names = {s.name for s in listed.list_services_response.service}
            assert names == {ARENA, HEALTH, V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME}, name
            files = [
                descriptor_pb2.FileDescriptorProto.FromString(blob)
                for blob in described.file_descriptor_response.file_descriptor_proto
            ]
            services = {f"{f.package}.{s.name}" for f in files for s in f.service}
            assert ARENA in services, name
            methods = {m.name for f in files for s in f.service for m in s.method}
            assert {"RegisterBot", "WatchMatch", "ListMatches"} <= methods

        # v1 describes itself too (a tool asks before its first call).
        (itself,) = ask(
            channel,
            v1,
            V1_SERVICE_NAME,
            v1.ServerReflectionRequest(file_containing_symbol=V1_SERVICE_NAME),
        )
        (blob, *_) = itself.file_descriptor_response.file_descriptor_proto
        assert descriptor_pb2.FileDescriptorProto.FromString(blob).package == "grpc.reflection.v1"


def test_health_answers_check_watch_and_list(tmp_path: Path) -> None:
    serving = health_pb2.HealthCheckResponse.SERVING
    with arena(tmp_path) as service, grpc.insecure_channel(service.address) as channel:
        check = channel.unary_unary(
            f"/{HEALTH}/Check",
            request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
            response_deserializer=health_pb2.HealthCheckResponse.FromString,
        )
        assert check(health_pb2.HealthCheckRequest(service=ARENA), timeout=10).status == serving
        watch = channel.unary_stream(
            f"/{HEALTH}/Watch",
            request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
            response_deserializer=health_pb2.HealthCheckResponse.FromString,
        )
        stream = watch(health_pb2.HealthCheckRequest(service=""), timeout=10)
        assert next(stream).status == serving
        stream.cancel()
        listed: Any = health_pb2
        health_list = channel.unary_unary(
            f"/{HEALTH}/List",
            request_serializer=listed.HealthListRequest.SerializeToString,
            response_deserializer=listed.HealthListResponse.FromString,
        )
        statuses = health_list(listed.HealthListRequest(), timeout=10).statuses
        assert {name: s.status for name, s in statuses.items()} == {
            "": serving,
            "liveness": serving,
            ARENA: serving,
        }


def test_v1_is_v1alpha_renamed_field_for_field() -> None:
    """What lets one servicer answer both: the same messages, numbers and types."""

    def shape(module: Any) -> dict[str, list[tuple[str, int, int, bool]]]:
        return {
            name: [(f.name, f.number, f.type, f.is_repeated) for f in message.fields]
            for name, message in module.DESCRIPTOR.message_types_by_name.items()
        }

    assert shape(v1) == shape(v1alpha)
    assert len(shape(v1)) == 8
