"""Who owns a local data dir: an advisory lock file the owning process holds while its server runs.

The owner (`mongomem dev`, or a CLI command's short-lived server) holds an exclusive `flock` on
`<data dir>/server.lock` and writes its PID, its SecantusDB child's PID and the server's address into
it. The kernel drops the lock when the owner dies, however it dies, so:

- a live owner is found (the lock is held): it is reported with its PID, and CLI commands use its server;
- a dead owner's lock is taken over; a SecantusDB child it left running on the same storage (it stops
  itself within a second, see `mongomem.local.secantus_child`) is stopped before the new one starts.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # Windows: fall back to checking the recorded PID
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = "server.lock"


class DataDirBusy(RuntimeError):
    """Another live process owns the data dir."""

    def __init__(self, data_dir: Path, info: dict[str, Any]) -> None:
        self.data_dir = data_dir
        self.pid = info.get("pid")
        self.uri = info.get("uri")
        # the local stack keeps its server's files in <data dir>/mongo: name the folder the user chose
        shown = data_dir.parent if data_dir.name == "mongo" else data_dir
        super().__init__(
            f"the data dir {shown} is in use by another mongomem process (PID {self.pid}"
            + (f", database {self.uri}" if self.uri else "")
            + "); stop it first or use another --data-dir"
        )


def _read(fd: int) -> dict[str, Any]:
    try:
        raw = os.pread(fd, 65536, 0)
        value = json.loads(raw or b"{}")
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def pid_alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class DataDirLock:
    """The exclusive lock on one data dir, held by this process between acquire() and release()."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.path = data_dir / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> dict[str, Any]:
        """Take the lock; returns what a dead previous owner left behind. Raises DataDirBusy."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                info = _read(fd)
                os.close(fd)
                raise DataDirBusy(self.data_dir, info) from None
            stale = _read(fd)
        else:
            stale = _read(fd)
            if stale.get("pid") != os.getpid() and pid_alive(stale.get("pid")):
                os.close(fd)
                raise DataDirBusy(self.data_dir, stale)
        self._fd = fd
        return stale

    def write(self, info: dict[str, Any]) -> None:
        assert self._fd is not None, "write() needs the lock"
        data = json.dumps({"pid": os.getpid(), **info}).encode()
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
        os.close(self._fd)  # closing drops the flock
        self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None


def owner(data_dir: Path) -> dict[str, Any] | None:
    """The live owner's record (pid, child_pid, uri, ...) of a data dir, or None when nobody holds it."""
    path = data_dir / LOCK_FILE
    if not path.exists():
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        info = _read(fd)
        if fcntl is None:
            return info if pid_alive(info.get("pid")) else None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return info  # held: the owner is alive
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def server_pids(storage: str) -> list[int]:
    """PIDs of SecantusDB processes serving `storage` (Linux /proc; empty elsewhere)."""
    proc = Path("/proc")
    if not sys.platform.startswith("linux") or not proc.is_dir():
        return []
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(b"secantus" in a for a in args) and storage.encode() in args:
            found.append(int(entry.name))
    return found


def stop_leftovers(storage: str, recorded: Any = None, timeout: float = 15.0) -> list[int]:
    """Stop servers a dead owner left on `storage` (SIGTERM, then SIGKILL); returns their PIDs."""
    pids = set(server_pids(storage))
    if isinstance(recorded, int) and pid_alive(recorded) and not sys.platform.startswith("linux"):
        pids.add(recorded)  # without /proc, trust the record
    pids.discard(os.getpid())
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while any(pid_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in pids:
        if pid_alive(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    return sorted(pids)
