"""Bad requests and handler bugs at the API's edge: a typed status, a bounded log.

``RequestGuard`` is a server interceptor that takes over request parsing for every method whose
request is one message (unary-unary and unary-stream: ``ArenaService``, health checks):
the method gets the raw bytes, parses them with the method's own deserializer and answers
INVALID_ARGUMENT with a short detail when they are not a valid encoding, instead of gRPC's
UNKNOWN with a traceback in the log. An exception escaping a handler becomes INTERNAL
("internal error", nothing of the exception sent back). Both are logged through
``RateLimitedLog``: one line per kind per interval, then a count of the rest, so a flood of bad
requests cannot flood the log. Streaming-request methods (reflection, and the bot streams
ConnectBot and RelayBot, which parse and refuse their own messages) pass through untouched.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, NoReturn

import grpc
import grpc.aio
from google.protobuf.message import DecodeError

Context = grpc.aio.ServicerContext[Any, Any]

LOG_INTERVAL_S = 60.0
"""How often each kind of bad request or handler error may write a log line."""


@dataclass
class _Window:
    started: float
    suppressed: int = 0


class RateLimitedLog:
    """At most one line per kind per ``interval_s``: the first event of a window is logged (with
    the count left unlogged in the window before), the others only counted.

    Kinds come from code (method names, exception types), so their number is bounded; the count
    of a window is written with the first event after it, if there is one.
    """

    def __init__(
        self,
        log: logging.Logger,
        interval_s: float = LOG_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._log = log
        self._interval_s = interval_s
        self._clock = clock
        self._windows: dict[str, _Window] = {}

    def report(self, kind: str, message: str, *, traceback: bool = False) -> bool:
        """Count one event of ``kind``; log it when its window is new. Whether it was logged."""
        now = self._clock()
        window = self._windows.get(kind)
        if window is not None and now - window.started < self._interval_s:
            window.suppressed += 1
            return False
        earlier = ""
        if window is not None and window.suppressed:
            earlier = f" ({window.suppressed} more in the {now - window.started:.0f} s before)"
        self._windows[kind] = _Window(now)
        self._log.warning("%s: %s%s", kind, message, earlier, exc_info=traceback)
        return True


class RequestGuard(grpc.aio.ServerInterceptor):
    """Parse requests in the method (INVALID_ARGUMENT when they do not parse) and turn escaped
    exceptions into INTERNAL, logging both through ``log``."""

    def __init__(self, log: RateLimitedLog) -> None:
        self._log = log

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]
        ],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = await continuation(handler_call_details)
        if handler is None or handler.request_streaming:
            return handler
        method = handler_call_details.method
        parse: Callable[[bytes], Any] = handler.request_deserializer or (lambda raw: raw)
        if handler.response_streaming:
            # A coroutine that writes its responses (context.write: the health Watch) stays a
            # coroutine; grpc refuses an async generator that also calls context.write.
            guard = (
                self._guard_unary
                if inspect.iscoroutinefunction(handler.unary_stream)
                else self._guard_stream
            )
            return grpc.unary_stream_rpc_method_handler(
                guard(method, parse, handler.unary_stream),
                response_serializer=handler.response_serializer,
            )
        return grpc.unary_unary_rpc_method_handler(
            self._guard_unary(method, parse, handler.unary_unary),
            response_serializer=handler.response_serializer,
        )

    def _guard_unary(
        self, method: str, parse: Callable[[bytes], Any], behaviour: Any
    ) -> Callable[[bytes, Context], Awaitable[Any]]:
        async def guarded(raw: bytes, context: Context) -> Any:
            request = await self._parse(method, parse, raw, context)
            try:
                result = behaviour(request, context)
                return await result if inspect.isawaitable(result) else result
            except grpc.aio.BaseError:  # abort() and the like: already a status
                raise
            except Exception as error:
                await self._internal(method, error, context)

        return guarded

    def _guard_stream(
        self, method: str, parse: Callable[[bytes], Any], behaviour: Any
    ) -> Callable[[bytes, Context], AsyncIterator[Any]]:
        async def guarded(raw: bytes, context: Context) -> AsyncIterator[Any]:
            request = await self._parse(method, parse, raw, context)
            try:
                responses = behaviour(request, context)
                if hasattr(responses, "__aiter__"):
                    async for response in responses:
                        yield response
                else:
                    for response in responses:
                        yield response
            except grpc.aio.BaseError:
                raise
            except Exception as error:
                await self._internal(method, error, context)

        return guarded

    async def _parse(
        self, method: str, parse: Callable[[bytes], Any], raw: bytes, context: Context
    ) -> Any:
        try:
            return parse(raw)
        except (DecodeError, ValueError, TypeError):
            self._log.report(
                f"malformed request {method}", f"{len(raw)} bytes from {context.peer()}"
            )
            await _abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                f"malformed request: not a valid {method.rsplit('/', 1)[-1]} request message",
            )

    async def _internal(self, method: str, error: Exception, context: Context) -> NoReturn:
        self._log.report(
            f"handler error {method} {type(error).__name__}", str(error)[:200], traceback=True
        )
        await _abort(context, grpc.StatusCode.INTERNAL, "internal error")


async def _abort(context: Context, code: grpc.StatusCode, detail: str) -> NoReturn:
    await context.abort(code, detail)
    raise AssertionError("abort returned")  # abort always raises
