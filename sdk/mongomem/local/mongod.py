"""Start SecantusDB (a MongoDB wire-protocol server over WiredTiger) as a child process.

Only the local stack and the tests use this; production and Docker users run real MongoDB.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

from pymongo import MongoClient
from pymongo.errors import PyMongoError


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class EmbeddedMongo:
    """A SecantusDB server on 127.0.0.1 keeping its data in `data_dir` (or in memory when None)."""

    def __init__(self, data_dir: Path | None, port: int | None = None, cache_size: str = "512M") -> None:
        self.data_dir = data_dir
        self.port = port or free_port()
        self.cache_size = cache_size
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = None

    @property
    def uri(self) -> str:
        return f"mongodb://127.0.0.1:{self.port}/?directConnection=true"

    def start(self, timeout: float = 60.0) -> EmbeddedMongo:
        storage = ":memory:"
        log_target = subprocess.DEVNULL
        if self.data_dir is not None:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            storage = str(self.data_dir / "db")
            self.log_path = self.data_dir / "secantus.log"
            log_target = self.log_path.open("ab")  # type: ignore[assignment]
        cmd = [
            sys.executable,
            "-m",
            "secantus",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--storage-path",
            storage,
            "--cache-size",
            self.cache_size,
            "--log-level",
            "WARNING",
        ]
        self.proc = subprocess.Popen(
            cmd, stdout=log_target, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        self._wait(timeout)
        return self

    def _wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"SecantusDB exited with code {self.proc.returncode}; see {self.log_path}")
            try:
                client: MongoClient[dict[str, object]] = MongoClient(self.uri, serverSelectionTimeoutMS=500)
                client.admin.command("ping")
                client.close()
                return
            except PyMongoError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"SecantusDB did not answer on port {self.port} within {timeout:.0f}s")

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None

    def kill(self) -> None:
        """Hard stop (fault tests)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None

    def __enter__(self) -> EmbeddedMongo:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
