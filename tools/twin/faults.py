"""Network faults the twin can put between a function and a service.

`Blackhole` is an endpoint that accepts connections and never answers (a dependency that hangs: a
saturated model endpoint, a dropped route): what a client's timeouts and retries, and so its caller's
time limits, are for.
"""

from __future__ import annotations

import socket
import threading


class Blackhole:
    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self._open: list[socket.socket] = []
        self._stopped = threading.Event()
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        threading.Thread(target=self._accept, name="blackhole", daemon=True).start()

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self._open.append(conn)  # held open, never read from or written to

    def close(self) -> None:
        self._stopped.set()
        for conn in self._open:
            conn.close()
        self._sock.close()

    def __enter__(self) -> Blackhole:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
