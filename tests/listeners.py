"""Things at a loopback address that are not bots, in this process: nothing (a closed port), an
HTTP/1.1 server, and sockets that accept and never send a byte. What a registrant may point
the arena at; the tests of public views and the registration-flood benchmark use them."""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
from collections.abc import Iterator

from arena.local_bots import free_port

KINDS = ("closed", "http", "silent")

HTTP_ANSWER = (
    b"HTTP/1.1 400 Bad Request\r\nServer: nginx/1.25.3\r\nContent-Length: 0\r\n"
    b"Connection: close\r\n\r\n"
)


@contextlib.contextmanager
def not_bots(kind: str, count: int = 1) -> Iterator[list[str]]:
    """``count`` loopback addresses ("127.0.0.1:port") where ``kind`` listens: ``closed``
    (nobody), ``http`` (answers anything with an HTTP/1.1 400 and closes) or ``silent``
    (accepts and holds every connection, never sending a byte). One thread serves them all
    until the block ends."""
    if kind == "closed":
        yield [f"127.0.0.1:{free_port()}" for _ in range(count)]
        return
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}")
    selector = selectors.DefaultSelector()
    listeners = []
    for _ in range(count):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        listener.setblocking(False)
        selector.register(listener, selectors.EVENT_READ, "listener")
        listeners.append(listener)
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            for key, _ in selector.select(timeout=0.1):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                if key.data == "listener":
                    with contextlib.suppress(OSError):
                        connection, _ = sock.accept()
                        connection.setblocking(False)
                        held.append(connection)
                        if kind == "http":
                            selector.register(connection, selectors.EVENT_READ, "client")
                    continue
                with contextlib.suppress(OSError):  # an http client said something: answer
                    sock.recv(65536)
                    sock.sendall(HTTP_ANSWER)
                selector.unregister(sock)
                sock.close()

    thread = threading.Thread(target=serve, name=f"not-bots-{kind}", daemon=True)
    thread.start()
    try:
        yield [f"127.0.0.1:{listener.getsockname()[1]}" for listener in listeners]
    finally:
        stop.set()
        thread.join(5)
        for sock in [*listeners, *held]:
            sock.close()
        selector.close()
