"""Peers that fail in ways a real server cannot be made to on demand."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def dropping_peer() -> Iterator[tuple[str, list[int]]]:
    """A peer that accepts each connection and closes it unanswered, as a process dying mid-request does:
    its URL and how many connections it has taken."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted = [0]

    def drop_all() -> None:
        with contextlib.suppress(OSError):  # the listener closed: done
            while True:
                connection, _ = listener.accept()
                accepted[0] += 1
                connection.close()

    thread = threading.Thread(target=drop_all, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", accepted
    finally:
        listener.close()
        thread.join(timeout=5)
