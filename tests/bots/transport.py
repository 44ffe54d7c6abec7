"""Servers whose connection is unusable for gRPC, each a real process on loopback.

    python -m tests.bots.transport MODE --listen 127.0.0.1:0

It prints ``LISTENING host:port`` once it accepts connections and serves until SIGTERM. Raw
sockets under trio, no gRPC library: each mode is a way a registered endpoint can be there and
still never answer a call.

Connection-level modes (no call is ever answered):

- ``goaway``: sends an HTTP/2 SETTINGS frame, then GOAWAY, and holds the socket open.
- ``silent``: accepts and never sends a byte (reads and discards what comes).
- ``http1``: a plain HTTP/1.1 server: answers the client's first bytes with ``400 Bad Request``
  and closes, as a web server without HTTP/2 does.
- ``tls``: a TLS server (self-signed certificate made with ``openssl`` at start): a plaintext
  client's bytes fail its handshake.
- ``close``: accepts and closes at once.

Stream-level modes: speaks just enough HTTP/2 and gRPC to answer every call, but the answer is
broken (HPACK literals only, no flow control needed for these few bytes):

- ``truncated``: the gRPC message's length prefix promises more bytes than the stream carries.
- ``rst``: response headers, then RST_STREAM before any message.
- ``no-message``: status OK in the trailers, but no message at all.
- ``two-messages``: two messages for a unary call.
- ``compressed``: a message flagged compressed though no encoding was negotiated.
"""

from __future__ import annotations

import argparse
import os
import signal
import ssl
import struct
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

import trio

# HTTP/2 frame types and flags (RFC 9113 section 6).
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY = 0x0, 0x1, 0x3, 0x4, 0x6, 0x7
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

CONNECTION_MODES = ("goaway", "silent", "http1", "tls", "close")
STREAM_MODES = ("truncated", "rst", "no-message", "two-messages", "compressed")
MODES = CONNECTION_MODES + STREAM_MODES


def h2_frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    """One HTTP/2 frame: 9-byte header (length, type, flags, stream id), then the payload."""
    header = len(payload).to_bytes(3, "big") + bytes([kind, flags]) + struct.pack(">I", stream)
    return header + payload


def literal(name: bytes, value: bytes) -> bytes:
    """An HPACK literal header field without indexing (names and values under 127 bytes)."""
    return bytes([0, len(name)]) + name + bytes([len(value)]) + value


RESPONSE_HEADERS = b"\x88" + literal(b"content-type", b"application/grpc")  # :status 200
OK_TRAILERS = literal(b"grpc-status", b"0")


def grpc_message(payload: bytes, *, compressed: bool = False, claimed: int | None = None) -> bytes:
    """A length-prefixed gRPC message (``claimed`` overrides the length it announces)."""
    length = len(payload) if claimed is None else claimed
    return bytes([1 if compressed else 0]) + struct.pack(">I", length) + payload


# Any answer parses as the empty StartMatch/EndMatch response; b"" is one for every call.
ANSWER = b""


def answer_frames(mode: str, stream: int) -> bytes:
    """What a stream-level mode sends back on ``stream``."""
    headers = h2_frame(HEADERS, END_HEADERS, stream, RESPONSE_HEADERS)
    trailers = h2_frame(HEADERS, END_HEADERS | END_STREAM, stream, OK_TRAILERS)
    body = b"\x0a\x02\x08\x01"  # a few protobuf bytes
    if mode == "truncated":
        return headers + h2_frame(DATA, 0, stream, grpc_message(body, claimed=100)) + trailers
    if mode == "rst":
        return headers + h2_frame(RST_STREAM, 0, stream, struct.pack(">I", 0x2))  # INTERNAL
    if mode == "no-message":
        return headers + trailers
    if mode == "two-messages":
        return headers + h2_frame(DATA, 0, stream, grpc_message(body) * 2) + trailers
    if mode == "compressed":
        return headers + h2_frame(DATA, 0, stream, grpc_message(body, compressed=True)) + trailers
    raise ValueError(f"not a stream mode: {mode}")


async def read_exactly(stream: trio.abc.ReceiveStream, count: int) -> bytes | None:
    """``count`` bytes, or None once the peer has closed."""
    data = b""
    while len(data) < count:
        chunk = await stream.receive_some(count - len(data))
        if not chunk:
            return None
        data += chunk
    return data


async def discard(stream: trio.abc.ReceiveStream) -> None:
    """Read and drop everything until the peer closes."""
    while await stream.receive_some(65536):
        pass


async def speak_h2(stream: trio.SocketStream, mode: str) -> None:
    """Answer every request stream the client opens with ``mode``'s broken answer."""
    if await read_exactly(stream, len(PREFACE)) != PREFACE:
        return
    await stream.send_all(h2_frame(SETTINGS, 0, 0))
    while (header := await read_exactly(stream, 9)) is not None:
        length = int.from_bytes(header[:3], "big")
        kind, flags = header[3], header[4]
        stream_id = int.from_bytes(header[5:9], "big") & 0x7FFF_FFFF
        payload = await read_exactly(stream, length) if length else b""
        if payload is None:
            return
        if kind == SETTINGS and not flags & ACK:
            await stream.send_all(h2_frame(SETTINGS, ACK, 0))
        elif kind == PING and not flags & ACK:
            await stream.send_all(h2_frame(PING, ACK, 0, payload))
        elif kind in (DATA, HEADERS) and flags & END_STREAM and stream_id:
            await stream.send_all(answer_frames(mode, stream_id))


def self_signed(directory: Path) -> ssl.SSLContext:
    """A server TLS context with a fresh self-signed certificate for 127.0.0.1."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"),
            *("-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


def handler_for(
    mode: str, tls: ssl.SSLContext | None
) -> Callable[[trio.SocketStream], Awaitable[None]]:
    """The per-connection behaviour of ``mode``."""

    async def handle(stream: trio.SocketStream) -> None:
        try:
            if mode == "goaway":
                await stream.send_all(
                    h2_frame(SETTINGS, 0, 0) + h2_frame(GOAWAY, 0, 0, struct.pack(">II", 0, 0))
                )
                await discard(stream)
            elif mode == "silent":
                await discard(stream)
            elif mode == "http1":
                await stream.receive_some(65536)
                await stream.send_all(
                    b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )
            elif mode == "tls":
                assert tls is not None
                tls_stream = trio.SSLStream(stream, tls, server_side=True)
                await tls_stream.do_handshake()
                await discard(tls_stream)
            elif mode == "close":
                pass
            else:
                await speak_h2(stream, mode)
        except (trio.BrokenResourceError, trio.ClosedResourceError, ssl.SSLError):
            pass
        finally:
            await stream.aclose()

    return handle


async def serve(mode: str, listen: str) -> None:
    host, port = listen.rsplit(":", 1)
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit("loopback only")
    with tempfile.TemporaryDirectory() as directory:
        tls = self_signed(Path(directory)) if mode == "tls" else None
        listeners = await trio.open_tcp_listeners(int(port), host=host)
        bound = listeners[0].socket.getsockname()[1]
        print(f"LISTENING {host}:{bound}", flush=True)
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(trio.serve_listeners, handler_for(mode, tls), listeners)
                async for _ in signals:
                    nursery.cancel_scope.cancel()
                    break


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("--listen", default="127.0.0.1:0")
    args = parser.parse_args()
    trio.run(serve, args.mode, args.listen)
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
