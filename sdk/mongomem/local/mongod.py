"""Start SecantusDB (a MongoDB wire-protocol server over WiredTiger) as a child process.

Only the local stack and the tests use this; production and Docker users run real MongoDB.
Durability: the mongomem stores write with `j: true` (docs/adr/0002-durability-what-a-2xx-means.md), which SecantusDB
honours per write (the commit fsyncs its journal), so a write acknowledged before a SIGKILL is there
after the restart. The child stops itself when this process dies (mongomem.local.secantus_child), and a
data dir is owned by one process at a time (mongomem.local.lock).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

from pymongo import MongoClient
from pymongo.errors import PyMongoError

from mongomem.config import environment
from mongomem.local import rebuild
from mongomem.local.lock import DataDirLock, stop_leftovers


def _progress(line: str) -> None:
    print(f"mongomem: rebuilding the database files after an erase: {line}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class EmbeddedMongo:
    """A SecantusDB server on 127.0.0.1 keeping its data in `data_dir` (or in memory when None)."""

    def __init__(
        self,
        data_dir: Path | None,
        port: int | None = None,
        cache_size: str = "512M",
        extra_args: tuple[str, ...] = (),
        *,
        lock: bool = True,
        rebuild_on_stop: bool = True,
    ) -> None:
        self.data_dir = data_dir
        self.take_lock = lock  # False: the caller owns the data dir already (a rebuild's own servers)
        # after an erase, a clean stop rebuilds the files (mongomem.local.rebuild): no freed block keeps it
        self.rebuild_on_stop = rebuild_on_stop
        self.extra_args = extra_args  # more SecantusDB options (tests: `--auth`)
        self.port = port or free_port()
        self.cache_size = cache_size
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = None
        self.lock: DataDirLock | None = None

    @property
    def uri(self) -> str:
        return f"mongodb://127.0.0.1:{self.port}/?directConnection=true"

    def start(self, timeout: float = 60.0) -> EmbeddedMongo:
        if self.data_dir is not None:
            self.data_dir = self.data_dir.resolve()
            if self.take_lock:
                self.lock = DataDirLock(self.data_dir)
                stale = self.lock.acquire()  # DataDirBusy while another live process owns the data dir
                # a dead owner's lock is taken over, with any server it left on the same storage
                stop_leftovers(str(self.data_dir / "db"), stale.get("child_pid"))
                rebuild.recover(self.data_dir)  # a rebuild cut short: its swap finished or undone
        self._spawn(timeout)
        return self

    @property
    def exited(self) -> int | None:
        """The child's exit code once it is gone (None while it runs or before it started)."""
        return self.proc.poll() if self.proc is not None else None

    def restart(self, timeout: float = 60.0) -> None:
        """Start the server again on the same port and storage after it died (the data dir stays ours, so
        the clients' URI still holds and their pools reconnect)."""
        if self.proc is not None and self.proc.poll() is None:
            return
        if self.data_dir is not None:
            stop_leftovers(str(self.data_dir / "db"), self.proc.pid if self.proc else None)
        self._spawn(timeout)

    def _spawn(self, timeout: float) -> None:
        storage = ":memory:"
        log_target = subprocess.DEVNULL
        if self.data_dir is not None:
            storage = str(self.data_dir / "db")
            self.log_path = self.data_dir / "secantus.log"
            log_target = self.log_path.open("ab")  # type: ignore[assignment]
        cmd = [
            sys.executable,
            "-m",
            "mongomem.local.secantus_child",
            str(os.getpid()),
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
            # No oplog: nothing of mongomem reads one (no change streams, no transactions), and an oplog
            # keeps full copies of deleted documents (an erased user's) for 100,000 operations.
            "--standalone",
            "--oplog-retention-seconds",
            "0",
            *self.extra_args,
        ]
        env = environment()
        if self.data_dir is not None:
            # SecantusDB's test-speed switch turns its journal off; a data dir is kept, so it stays on.
            env.pop("SECANTUS_TEST_FAST_STORAGE", None)
            env["SECANTUS_FORCE_DURABLE"] = "1"
        try:
            self.proc = subprocess.Popen(
                cmd, stdout=log_target, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env
            )
        except OSError:
            self._release()
            raise
        if self.lock is not None:
            self.lock.write(
                {"child_pid": self.proc.pid, "port": self.port, "uri": self.uri, "storage": storage}
            )
        self._wait(timeout)

    def _release(self) -> None:
        if self.lock is not None:
            self.lock.release()
            self.lock = None

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
        clean = False
        try:
            if self.proc is not None and self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=20)
                    clean = True  # stopped, not killed: the files are closed (a rebuild reopens them anyway)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=10)
            self.proc = None
            owned = self.lock is not None and self.rebuild_on_stop and self.data_dir is not None
            if clean and owned and self.data_dir is not None and rebuild.pending(self.data_dir):
                try:
                    rebuild.rebuild(self.data_dir, self._serve_unlocked, _progress)
                except Exception as err:  # the old files stay in place, and the mark: tried at the next stop
                    _progress(
                        f"WARNING: not rebuilt ({err}); the old files are kept, and may hold an erased "
                        "user's data in freed blocks until the next stop rebuilds them"
                    )
        finally:
            self.proc = None
            self._release()

    def _serve_unlocked(self, data_dir: Path) -> EmbeddedMongo:
        return EmbeddedMongo(
            data_dir,
            cache_size=self.cache_size,
            extra_args=self.extra_args,
            lock=False,
            rebuild_on_stop=False,
        ).start()

    def kill(self) -> None:
        """Hard stop (fault tests): SIGKILL, as a crash would."""
        try:
            if self.proc is not None and self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(timeout=10)
        finally:
            self.proc = None
            self._release()

    def __enter__(self) -> EmbeddedMongo:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
