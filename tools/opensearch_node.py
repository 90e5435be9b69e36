"""Run a real single-node OpenSearch (2.19.1 + k-NN plugin) without Docker.

Stdlib only.  The node is assembled by ``tools/opensearch/prepare.sh`` from
Maven Central artifacts (cached in ~/.m2) into ``$MONGOMEM_OPENSEARCH_HOME``
(default ``<repo>/.cache/opensearch``).  k-NN works with ``"engine": "lucene"``
only: the faiss/nmslib native libraries are not shipped on Maven Central.

    from tools.opensearch_node import OpenSearchNode
    with OpenSearchNode() as node:      # start() on enter, stop() on exit
        print(node.url)                 # http://127.0.0.1:PORT

    python tools/opensearch_node.py [--port 9200] [--data-dir DIR] [--heap 1g]
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import weakref
from pathlib import Path

TOOLS_DIR = Path(__file__).resolve().parent
PREPARE_SH = TOOLS_DIR / "opensearch" / "prepare.sh"

__all__ = ["OpenSearchNode", "OpenSearchNodeError", "free_port", "java_home", "prepare"]


class OpenSearchNodeError(RuntimeError):
    """The node could not be prepared or did not become healthy."""


def prepare() -> Path:
    """Fetch/assemble the node if needed (fast no-op when ready); return its home."""
    proc = subprocess.run(
        ["bash", str(PREPARE_SH)],
        stdout=subprocess.PIPE,
        stderr=None,  # progress goes straight to our stderr
        text=True,
        env={**os.environ, **({"OPENSEARCH_JAVA_HOME": str(java_home())} if _java_ok() else {})},
    )
    if proc.returncode != 0:
        raise OpenSearchNodeError(f"{PREPARE_SH} failed with exit code {proc.returncode}")
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    if not lines:
        raise OpenSearchNodeError(f"{PREPARE_SH} printed no node home")
    return Path(lines[-1].strip())


def java_home() -> Path:
    """OPENSEARCH_JAVA_HOME, else JAVA_HOME, else the JDK of the ``java`` on PATH."""
    for var in ("OPENSEARCH_JAVA_HOME", "JAVA_HOME"):
        value = os.environ.get(var)
        if value and (Path(value) / "bin" / "java").exists():
            return Path(value)
    java = shutil.which("java")
    if not java:
        raise OpenSearchNodeError("no java found: set JAVA_HOME or put java (17+) on PATH")
    return Path(os.path.realpath(java)).parent.parent


def _java_ok() -> bool:
    try:
        java_home()
        return True
    except OpenSearchNodeError:
        return False


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _jvm_opts(heap: str) -> list[str]:
    opts = [f"-Xms{heap}", f"-Xmx{heap}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        # OpenSearch refuses to run as root, and checks that through JNA (geteuid).
        # CI and dev machines here run as root: make JNA's native stub unloadable so
        # the check is skipped ("cannot check if running as root because JNA is not
        # available").  Costs only mlockall/seccomp, which a test node doesn't need.
        opts += ["-Djna.nosys=true", "-Djna.nounpack=true", "-Djna.boot.library.path=/nonexistent"]
    return opts


_LIVE_NODES: weakref.WeakSet[OpenSearchNode] = weakref.WeakSet()


@atexit.register
def _kill_leftovers() -> None:  # never leave a JVM behind a crashed test run
    for node in list(_LIVE_NODES):
        try:
            node.kill()
            if node._owns_data_dir and node.data_dir is not None:
                shutil.rmtree(node.data_dir, ignore_errors=True)
        except Exception:
            pass


class OpenSearchNode:
    """One OpenSearch process bound to 127.0.0.1, plain HTTP, single-node discovery."""

    def __init__(self, home: Path | None = None, cluster_name: str = "mongomem") -> None:
        self._home = Path(home) if home else None
        self.cluster_name = cluster_name
        self.port: int | None = None
        self.data_dir: Path | None = None
        self.heap = "1g"
        self.startup_seconds: float | None = None
        self._proc: subprocess.Popen | None = None
        self._owns_data_dir = False
        self._log_handle = None

    # ---------------------------------------------------------------- info
    @property
    def home(self) -> Path:
        if self._home is None:
            self._home = prepare()
        return self._home

    @property
    def url(self) -> str:
        if self.port is None:
            raise OpenSearchNodeError("node not started")
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def log_path(self) -> Path:
        """Console output of the node (includes everything log4j logs)."""
        if self.data_dir is None:
            raise OpenSearchNodeError("node not started")
        return self.data_dir / "logs" / "console.log"

    def is_running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except (OSError, OpenSearchNodeError):
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    # ------------------------------------------------------------ lifecycle
    def start(
        self,
        port: int | None = None,
        data_dir: Path | None = None,
        heap: str = "1g",
        timeout: float = 180.0,
    ) -> None:
        if self.is_running():
            raise OpenSearchNodeError(f"node already running at {self.url}")
        home = self.home
        self.port = int(port) if port else free_port()
        if data_dir is None:
            data_dir = Path(tempfile.mkdtemp(prefix="mongomem-opensearch-"))
            self._owns_data_dir = True
        else:
            self._owns_data_dir = False
        self.data_dir = Path(data_dir).resolve()
        self.heap = heap
        self._launch(home, timeout)

    def _launch(self, home: Path, timeout: float) -> None:
        data_dir = self.data_dir
        assert data_dir is not None and self.port is not None
        conf = data_dir / "config"
        for sub in ("config", "data", "logs", "tmp"):
            (data_dir / sub).mkdir(parents=True, exist_ok=True)
        self._write_config(home, conf)

        env = {k: v for k, v in os.environ.items() if k not in ("JAVA_TOOL_OPTIONS", "JAVA_OPTS")}
        env.update(
            OPENSEARCH_JAVA_HOME=str(java_home()),
            OPENSEARCH_PATH_CONF=str(conf),
            OPENSEARCH_TMPDIR=str(data_dir / "tmp"),
            OPENSEARCH_JAVA_OPTS=" ".join(_jvm_opts(self.heap)),
        )
        self._log_handle = open(self.log_path, "ab")
        started = time.monotonic()
        self._proc = subprocess.Popen(
            [str(home / "bin" / "opensearch")],
            cwd=str(data_dir),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log_handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C of the parent does not hit the JVM
        )
        _LIVE_NODES.add(self)
        try:
            self._wait_healthy(timeout)
        except BaseException:
            self.kill()
            raise
        self.startup_seconds = time.monotonic() - started

    def _write_config(self, home: Path, conf: Path) -> None:
        src = home / "config"
        shutil.copy2(src / "log4j2.properties", conf / "log4j2.properties")
        jvm = [
            line
            for line in (src / "jvm.options").read_text().splitlines()
            if not line.startswith(("-Xms", "-Xmx"))  # heap comes from OPENSEARCH_JAVA_OPTS
        ]
        (conf / "jvm.options").write_text("\n".join(jvm) + "\n")
        (conf / "jvm.options.d").mkdir(exist_ok=True)
        settings = {
            "cluster.name": self.cluster_name,
            "node.name": "node-1",
            "network.host": "127.0.0.1",
            "http.port": self.port,
            "transport.port": free_port(),
            "discovery.type": "single-node",
            "path.data": str(self.data_dir / "data"),
            "path.logs": str(self.data_dir / "logs"),
            # a nearly full disk must not turn indices read-only
            "cluster.routing.allocation.disk.threshold_enabled": False,
            "action.destructive_requires_name": False,
        }
        # JSON is valid YAML; quoting keeps paths with odd characters safe
        (conf / "opensearch.yml").write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in settings.items()))

    def _wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        last_error = "no answer yet"
        while time.monotonic() < deadline:
            if self._proc is None or self._proc.poll() is not None:
                code = self._proc.returncode if self._proc else None
                raise OpenSearchNodeError(
                    f"OpenSearch exited with code {code} during startup "
                    f"(log {self.log_path}):\n{self.log_tail()}"
                )
            try:
                health = self.request("GET", "/_cluster/health?wait_for_status=yellow&timeout=2s", timeout=5)
                if health.get("status") in ("yellow", "green"):
                    return
                last_error = f"status {health.get('status')}"
            except (OSError, urllib.error.URLError, ValueError) as exc:
                last_error = str(exc)
            time.sleep(0.5)
        raise OpenSearchNodeError(
            f"OpenSearch at {self.url} not healthy within {timeout:.0f}s ({last_error}); "
            f"log {self.log_path}:\n{self.log_tail()}"
        )

    def stop(self, timeout: float = 30.0) -> None:
        """Graceful shutdown (SIGTERM), SIGKILL after ``timeout``; removes a temp data dir."""
        self._terminate(timeout)
        if self._owns_data_dir and self.data_dir is not None:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            self._owns_data_dir = False

    def kill(self) -> None:
        """Hard stop (SIGKILL), as a crash would; the data dir is kept."""
        self._terminate(0)

    def restart(self, timeout: float = 180.0) -> None:
        """Graceful stop then start again on the same port and data dir."""
        if self.port is None or self.data_dir is None:
            raise OpenSearchNodeError("node was never started")
        self._terminate(30.0)
        self._launch(self.home, timeout)

    def _terminate(self, timeout: float) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            try:
                if timeout > 0:
                    proc.send_signal(signal.SIGTERM)
                    try:
                        proc.wait(timeout)
                    except subprocess.TimeoutExpired:
                        pass
                if proc.poll() is None:
                    proc.kill()
                    proc.wait(30)
            except ProcessLookupError:
                pass
        if self._log_handle is not None:
            self._log_handle.close()
            self._log_handle = None
        _LIVE_NODES.discard(self)

    # --------------------------------------------------------------- helpers
    def request(self, method: str, path: str, body: object | None = None, timeout: float = 30.0) -> dict:
        """Tiny JSON HTTP helper (stdlib); raises urllib.error.HTTPError on 4xx/5xx."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(
            self.url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else {}

    def __enter__(self) -> OpenSearchNode:
        if not self.is_running():
            self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.is_running() else "stopped"
        return f"<OpenSearchNode {state} port={self.port} data_dir={self.data_dir}>"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run a single-node OpenSearch (k-NN) in the foreground.")
    parser.add_argument("--port", type=int, default=None, help="HTTP port (default: a free one)")
    parser.add_argument("--data-dir", type=Path, default=None, help="data/log dir (default: temporary)")
    parser.add_argument("--heap", default="1g", help="JVM heap, e.g. 512m, 1g (default 1g)")
    parser.add_argument("--prepare-only", action="store_true", help="only fetch/assemble, print the home")
    args = parser.parse_args(argv)
    if args.prepare_only:
        print(prepare())
        return 0
    node = OpenSearchNode()
    node.start(port=args.port, data_dir=args.data_dir, heap=args.heap)
    print(
        f"OpenSearch ready at {node.url} (started in {node.startup_seconds:.1f}s, pid {node.pid})", flush=True
    )
    print(f"logs: {node.log_path}   Ctrl-C to stop", flush=True)
    try:
        while node.is_running():
            time.sleep(1)
        print(f"OpenSearch exited; log tail:\n{node.log_tail()}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("stopping ...", flush=True)
        return 0
    finally:
        node.stop()


if __name__ == "__main__":
    sys.exit(main())
