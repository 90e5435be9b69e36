"""Issue 11, finding 6: `mongomem dev` survives its own failures, run as a user runs it (a real process).

A bad --config is one error line and exit 2 with nothing left running; every way the command ends stops
its SecantusDB child; a SIGKILLed run's leftovers never block the next start; a second run on a live data
dir names the owner's PID; and `mongomem keys` talks to the running stack's server.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mongomem.local.lock import LOCK_FILE, owner, pid_alive, server_pids

ROOT = Path(__file__).resolve().parents[2]
READY = "Ctrl-C stops it"
# the console script `pip install mongomem` puts next to the interpreter
MONGOMEM = str(Path(sys.executable).parent / "mongomem")


def dev_command(data_dir: Path, config: Path, *extra: str) -> list[str]:
    return [
        MONGOMEM,
        "dev",
        "--data-dir",
        str(data_dir),
        "--config",
        str(config),
        "--port",
        "0",
        "--scan-seconds",
        "3600",
        *extra,
    ]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mongomem.cli.main", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


class Dev:
    """A `mongomem dev` process with its output in a file."""

    def __init__(self, data_dir: Path, config: Path, log: Path) -> None:
        self.data_dir, self.log = data_dir, log
        self.proc = subprocess.Popen(
            dev_command(data_dir, config),
            cwd=ROOT,
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )

    def output(self) -> str:
        return self.log.read_text()

    def wait_ready(self, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while READY not in self.output():
            assert self.proc.poll() is None, f"mongomem dev exited {self.proc.returncode}:\n{self.output()}"
            assert time.monotonic() < deadline, self.output()
            time.sleep(0.2)

    @property
    def child(self) -> int:
        info = owner(self.data_dir / "mongo")
        assert info is not None, "no live owner of the data dir"
        return int(info["child_pid"])

    def api(self) -> str:
        line = next(line for line in self.output().splitlines() if line.strip().startswith("API"))
        return line.split()[1]

    def finish(self, timeout: float = 60.0) -> int:
        return self.proc.wait(timeout=timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "project-config.yaml"
    path.write_text("memory:\n  providers: {embeddings: {kind: hashing, dim: 64}}\n")
    return path


@pytest.fixture
def runs(tmp_path: Path) -> Iterator[list[Dev]]:
    started: list[Dev] = []
    yield started
    for run in started:
        run.close()


def storage(data_dir: Path) -> str:
    return str((data_dir / "mongo" / "db").resolve())


def wait_gone(pid: int, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not pid_alive(pid)


BAD_CONFIGS = [
    ("bad YAML", "memory:\n  snapshot: {max_messages: 4\n  bad\n", "not valid YAML at line"),
    ("wrong type", "memory:\n  snapshot: {max_messages: lots}\n", "memory.snapshot.max_messages"),
    ("unknown key", "memory:\n  snapshot: {colour: red}\n", "memory.snapshot.colour"),
    ("bad provider", "memory:\n  providers: {llm: {kind: telepathy}}\n", "memory.providers.llm.kind"),
]


@pytest.mark.parametrize(("label", "text", "named"), BAD_CONFIGS, ids=[c[0] for c in BAD_CONFIGS])
def test_a_bad_config_is_one_line_exit_2_and_nothing_left_running(
    tmp_path: Path, label: str, text: str, named: str
) -> None:
    config, data = tmp_path / "bad.yaml", tmp_path / "data"
    config.write_text(text)
    done = subprocess.run(dev_command(data, config), cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done
    errors = done.stderr.strip().splitlines()
    assert len(errors) == 1 and named in errors[0] and "Traceback" not in done.stderr, done.stderr
    assert server_pids(storage(data)) == [] and owner(data / "mongo") is None


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_every_stop_signal_stops_the_database_child(
    tmp_path: Path, config: Path, runs: list[Dev], sig: signal.Signals
) -> None:
    run = Dev(tmp_path / "data", config, tmp_path / "dev.log")
    runs.append(run)
    run.wait_ready()
    child = run.child
    run.proc.send_signal(sig)
    assert run.finish() == 0, run.output()
    assert "stopped." in run.output()
    assert wait_gone(child, timeout=5) and server_pids(storage(run.data_dir)) == []


def test_a_failed_start_stops_the_child_it_had_started(tmp_path: Path, config: Path) -> None:
    # Given the API port is taken, so the stack fails after its database has started
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        data = tmp_path / "data"
        command = dev_command(data, config)
        command[command.index("--port") + 1] = port
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and f"cannot serve on 127.0.0.1:{port}" in done.stderr, done
    assert server_pids(storage(data)) == [] and owner(data / "mongo") is None


def test_a_sigkilled_run_never_blocks_the_next_start_and_a_live_one_is_named(
    tmp_path: Path, config: Path, runs: list[Dev]
) -> None:
    data = tmp_path / "data"
    first = Dev(data, config, tmp_path / "first.log")
    runs.append(first)
    first.wait_ready()
    # A second run on the live data dir is refused, naming the owner's PID
    done = subprocess.run(dev_command(data, config), cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and f"PID {first.proc.pid}" in done.stderr, done
    assert len(done.stderr.strip().splitlines()) == 1
    # When the first run is killed with SIGKILL (it cannot stop its child) and started again at once
    child = first.child
    first.proc.kill()
    first.finish()
    second = Dev(data, config, tmp_path / "second.log")
    runs.append(second)
    second.wait_ready()
    # Then the new run owns the data dir, and the old child is gone
    assert wait_gone(child) and second.child != child
    assert server_pids(storage(data)) == [second.child]
    info = json.loads((data / "mongo" / LOCK_FILE).read_text())
    assert info["pid"] == second.proc.pid
    second.proc.send_signal(signal.SIGTERM)
    assert second.finish() == 0


def test_a_child_left_by_a_sigkilled_run_stops_by_itself(
    tmp_path: Path, config: Path, runs: list[Dev]
) -> None:
    run = Dev(tmp_path / "data", config, tmp_path / "dev.log")
    runs.append(run)
    run.wait_ready()
    child = run.child
    os.kill(run.proc.pid, signal.SIGKILL)
    run.finish()
    assert wait_gone(child, timeout=15), "the SecantusDB child outlived its SIGKILLed parent"
    assert owner(run.data_dir / "mongo") is None


def test_keys_commands_use_the_running_stack_and_never_start_a_second_server(
    tmp_path: Path, config: Path, runs: list[Dev]
) -> None:
    data = tmp_path / "data"
    run = Dev(data, config, tmp_path / "dev.log")
    runs.append(run)
    run.wait_ready()
    child = run.child
    # an unknown key is a clear error, not a second server on the live data dir
    done = cli("keys", "revoke", "k-unknown", "--data-dir", str(data))
    assert done.returncode == 1 and "no key 'k-unknown'" in done.stderr, done
    assert "Traceback" not in done.stderr
    created = cli("keys", "create", "--tenant", "acme", "--kind", "memory_service", "--data-dir", str(data))
    assert created.returncode == 0, created
    key_id = created.stdout.split()[2]
    listed = cli("keys", "list", "--data-dir", str(data))
    assert key_id in listed.stdout
    assert server_pids(storage(data)) == [child]
    # and the running stack sees the key at once: requests now need it
    import urllib.error
    import urllib.request

    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(run.api() + "/v1/memories?user_id=u", timeout=30)
    assert refused.value.code == 401
    run.proc.send_signal(signal.SIGTERM)
    assert run.finish() == 0


def request(url: str, method: str = "GET", body: bytes | None = None) -> int:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=body, method=method), timeout=30) as r:
            return int(r.status)
    except urllib.error.HTTPError as err:
        return int(err.code)


def test_a_killed_database_child_is_restarted_and_the_stack_serves_again(
    tmp_path: Path, config: Path, runs: list[Dev]
) -> None:
    """Issue 25: after `kill -9` of the database child the stack kept serving with a dead store (every
    request and tick failed with a server-selection timeout) until a human restarted it."""
    run = Dev(tmp_path / "data", config, tmp_path / "dev.log")
    runs.append(run)
    run.wait_ready()
    api, child = run.api(), run.child
    turn = b'{"user_id": "ana", "role": "user", "content": "I live in Porto."}'
    assert request(f"{api}/v1/sessions/s1/turns", "POST", turn) == 201
    # When the database child dies as a crash would
    os.kill(child, signal.SIGKILL)
    # Then the stack starts it again on its data, and what was recorded is served again
    deadline = time.monotonic() + 60
    while "requests work again" not in run.output():
        assert time.monotonic() < deadline and run.proc.poll() is None, run.output()
        time.sleep(0.2)
    assert request(f"{api}/v1/sessions/s1?user_id=ana") == 200
    assert request(f"{api}/v1/sessions/s1/turns", "POST", turn) == 201
    assert run.child != child and server_pids(storage(run.data_dir)) == [run.child]
    assert "the database process exited (code -9); restarting it" in run.output()


def test_the_console_shows_one_line_per_request_and_no_metric_json(
    tmp_path: Path, config: Path, runs: list[Dev]
) -> None:
    """Issue 25: `make dev` printed EMF metric JSON and full tracebacks."""
    run = Dev(tmp_path / "data", config, tmp_path / "dev.log")
    runs.append(run)
    run.wait_ready()
    api = run.api()
    assert (
        request(f"{api}/v1/sessions/s1/turns", "POST", b'{"user_id": "ana", "role": "user", "content": "hi"}')
        == 201
    )
    assert request(f"{api}/v1/nothing") == 404
    assert request(f"{api}/v1/sessions/s1/flush?user_id=ana", "POST") == 200
    time.sleep(2)  # the flush's extraction runs in the background (metrics on every kind)
    lines = run.output().splitlines()
    assert any(re.fullmatch(r"\d\d:\d\d:\d\d POST /v1/sessions/s1/turns 201 \d+ ms", x) for x in lines), lines
    assert any(re.fullmatch(r"\d\d:\d\d:\d\d GET /v1/nothing 404 route_not_found \d+ ms", x) for x in lines)
    assert not [x for x in lines if x.startswith('{"_aws"') or x.startswith("{")], lines
    assert "Traceback" not in run.output()


def test_ctrl_c_stops_it_even_when_its_shell_ignores_sigint(tmp_path: Path, config: Path) -> None:
    """A non-interactive shell starts background jobs with SIGINT ignored (`make dev &` in a script, a CI
    runner); Python keeps that, so `mongomem dev` ignored Ctrl-C there."""
    data = tmp_path / "data"
    log = tmp_path / "dev.log"
    proc = subprocess.Popen(
        dev_command(data, config),
        cwd=ROOT,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        deadline = time.monotonic() + 90
        while READY not in log.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0 and "stopped." in log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
