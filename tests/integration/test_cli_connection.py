"""Issue 25: every `mongomem` command takes the same connection options and says what to do when it fails.

`--base-url` / MONGOMEM_URL, `--api-key` / MONGOMEM_API_KEY and `--data-dir` / MONGOMEM_DATA_DIR mean the
same thing everywhere; a command finds the local stack running on the data dir; nothing answering names
the URL, where it came from and how to start the stack; a 401 says which key to pass instead of "run it
again"; `keys create` never makes a key in an empty database the running stack does not read, warns when
the first key hides what the open stack recorded, and `keys revoke` does not lock the stack by accident.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from mongomem.cli import main
from mongomem.client import MemoryClient
from mongomem.local.stack import LocalStack

ROOT = Path(__file__).resolve().parents[2]
CONFIG = "memory:\n  providers: {embeddings: {kind: hashing, dim: 64}}\n"
# the commands that call the memory API, each with the arguments it needs besides the connection
API_COMMANDS = {
    "memories export": ["memories", "export", "{tmp}/out.jsonl", "--user-id", "ana"],
    "import": ["import", "{tmp}/history.jsonl", "--user-id", "ana"],
    "memory status": ["memory", "status", "--local"],
}
UNREACHABLE = "http://127.0.0.1:9"  # the discard port: nothing answers there


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    out = "\n".join(line for line in captured.out.splitlines() if not line.startswith('{"_aws"'))
    return code, out, captured.err


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    data = tmp_path_factory.mktemp("cli-connection")
    config = data / "config.yaml"
    config.write_text(CONFIG)
    stack = LocalStack(data_dir=data / "data", port=0, scan_seconds=3600, config_file=config).start()
    MemoryClient(stack.url).record_turn("s1", "ana", "user", "I live in Lisbon.")
    yield stack
    stack.stop()


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in (
        "MONGOMEM_URL",
        "MONGOMEM_API_KEY",
        "MONGOMEM_DATA_DIR",
        "MONGOMEM_MONGODB_URI",
        "MONGOMEM_STACK",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no .mongomem here
    (tmp_path / "history.jsonl").write_text(
        json.dumps(
            {"session_id": "old", "role": "user", "content": "hi", "timestamp": "2024-01-02T10:00:00Z"}
        )
        + "\n"
    )
    return tmp_path


def start(data: Path, config: Path | None = None) -> LocalStack:
    """A local stack on `data` (started from the repository, where its functions are)."""
    with contextlib.chdir(ROOT):
        return LocalStack(data_dir=data, port=0, scan_seconds=3600, config_file=config).start()


def argv(command: str, tmp: Path, *extra: str) -> list[str]:
    return [a.format(tmp=tmp) for a in API_COMMANDS[command]] + list(extra)


@pytest.mark.parametrize("command", sorted(API_COMMANDS))
def test_every_api_command_reads_the_url_from_mongomem_url(
    command: str,
    stack: LocalStack,
    clean_env: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given only MONGOMEM_URL naming the stack (before: `memories export` and `mcp` ignored it)
    monkeypatch.setenv("MONGOMEM_URL", stack.url)
    # When the command runs without --base-url, Then it talks to that stack
    code, out, err = run(capsys, *argv(command, clean_env))
    assert code == 0, (out, err)


@pytest.mark.parametrize("command", sorted(API_COMMANDS))
def test_every_api_command_finds_the_stack_running_on_its_data_dir(
    command: str, stack: LocalStack, clean_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a stack on a random port: the data dir alone leads there (no URL given anywhere)
    assert not stack.url.endswith(":3000")
    code, out, err = run(capsys, *argv(command, clean_env, "--data-dir", str(stack.data_dir)))
    assert code == 0, (out, err)


@pytest.mark.parametrize("command", ["memories export", "import"])
def test_nothing_answering_names_the_url_its_source_and_how_to_start_the_stack(
    command: str, clean_env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MONGOMEM_URL", UNREACHABLE)
    code, _, err = run(capsys, *argv(command, clean_env))
    assert code == 1
    assert f"nothing answers at {UNREACHABLE} ($MONGOMEM_URL)" in err
    assert "make dev" in err and "--base-url" in err
    assert "run the same command again" in err or command != "import"  # a network failure may pass


def test_mcp_takes_the_same_connection_options() -> None:
    from mongomem import mcp_server
    from mongomem.cli.connection import connection

    parser = argparse.ArgumentParser()
    mcp_server.add_arguments(parser)
    args = parser.parse_args(["--base-url", "http://h:1", "--api-key", "k", "--data-dir", "d"])
    conn = connection(args)
    assert (conn.base_url, conn.api_key, conn.data_dir) == ("http://h:1", "k", Path("d"))


def test_an_import_refused_for_its_key_says_which_key_to_pass_not_to_run_it_again(
    tmp_path: Path, clean_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "locked"
    stack = start(data)
    try:
        assert (
            run(
                capsys,
                "keys",
                "create",
                "--tenant",
                "default",
                "--kind",
                "memory_service",
                "--data-dir",
                str(data),
            )[0]
            == 0
        )
        # When the import is sent without a key, then with a wrong one
        code, _, err = run(capsys, *argv("import", clean_env, "--data-dir", str(data)))
        assert code == 1 and "401 unauthorized" in err
        assert "--api-key or set MONGOMEM_API_KEY" in err and "run the same command again" not in err
        code, _, err = run(capsys, *argv("import", clean_env, "--data-dir", str(data), "--api-key", "mm_x_y"))
        assert (
            code == 1 and "refused the key from --api-key" in err and "run the same command again" not in err
        )
    finally:
        stack.stop()


def test_keys_create_never_makes_a_new_database(clean_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Given no local stack in this folder (a user in another directory than `make dev`'s)
    code, out, err = run(capsys, "keys", "create", "--tenant", "default", "--kind", "memory_service")
    # Then nothing is created and the error says where it looked and what to pass
    assert code == 1 and "mm_" not in out
    assert f"no local stack data in {clean_env / '.mongomem'}" in err and "--data-dir" in err
    assert not (clean_env / ".mongomem").exists()


def test_the_first_key_of_another_tenant_warns_that_the_open_data_stays_with_default(
    tmp_path: Path, clean_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "open"
    stack = start(data)
    try:
        MemoryClient(stack.url).record_turn("s1", "ana", "user", "I live in Lisbon.")
        code, out, err = run(
            capsys, "keys", "create", "--tenant", "acme", "--kind", "memory_service", "--data-dir", str(data)
        )
        assert code == 0
        assert "first key" in out and "every request needs an x-api-key" in out
        assert "belongs to tenant 'default'" in err and "1 user(s), 1 session(s)" in err
        assert "--tenant default" in err
        # ... and the new key was tried against the running stack
        assert f"checked: the stack at {stack.url} accepts it" in out
        # a second key says nothing more
        code, out, err = run(
            capsys, "keys", "create", "--tenant", "acme", "--kind", "memory_service", "--data-dir", str(data)
        )
        assert code == 0 and "first key" not in out and "belongs to tenant" not in err
    finally:
        stack.stop()


def test_revoking_the_last_active_key_needs_force(
    tmp_path: Path, clean_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "revoke"
    stack = start(data)
    try:
        where = ["--data-dir", str(data)]
        run(capsys, "keys", "create", "--tenant", "default", "--kind", "memory_service", *where)
        key_id = stack.keys.list()[0].key_id
        # When the only active key is revoked without --force, Then nothing changes and the error says why
        code, _, err = run(capsys, "keys", "revoke", key_id, *where)
        assert code == 1 and "last active key" in err and "--force" in err
        assert stack.keys.get(key_id).revoked_at is None
        # With a second key the first one goes without a question
        run(capsys, "keys", "create", "--tenant", "default", "--kind", "memory_service", *where)
        assert run(capsys, "keys", "revoke", key_id, *where)[0] == 0
        # and --force revokes the last one, saying how to get back in
        last = next(k.key_id for k in stack.keys.list() if k.revoked_at is None)
        code, out, _ = run(capsys, "keys", "revoke", last, "--force", *where)
        assert code == 0 and "no active key is left" in out
    finally:
        stack.stop()


def test_reindex_works_on_a_stopped_stacks_data_dir_and_refuses_a_running_one(
    tmp_path: Path, clean_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "reindex"
    config = tmp_path / "project-config.yaml"
    config.write_text(CONFIG)
    stack = start(data, config)
    try:
        mem = MemoryClient(stack.url)
        mem.create_memory("ana", "semantic", {"subject": "ana", "attribute": "home airport", "value": "LIS"})
        code, _, err = run(capsys, "reindex", "--data-dir", str(data))
        assert code == 1 and "is running" in err and "stop `mongomem dev` first" in err
    finally:
        stack.stop()
    # When the stack is stopped, reindex needs no MONGOMEM_* variable: the data dir is enough
    (data / "project-config.yaml").write_text(CONFIG)  # where `mongomem memory configure` puts it
    code, out, err = run(capsys, "reindex", "--data-dir", str(data), "--drop")
    assert code == 0, err
    assert "done: 1 memory versions indexed" in out


def test_dev_documents_its_port_and_make_dev_takes_one() -> None:
    helped = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "mongomem"), "dev", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "--port PORT" in helped and "MONGOMEM_PORT" in helped and "default 3000" in helped
    dry = subprocess.run(
        ["make", "-n", "dev", "PORT=3101", "DATA_DIR=/tmp/x"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "mongomem dev --port 3101 --data-dir /tmp/x" in dry
    listed = subprocess.run(["make", "help"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for target in ("dev", "test", "lint", "setup", "twin"):
        assert f"\n  {target} " in listed, listed
    assert "PORT=" in listed and "DATA_DIR=" in listed


def test_memory_status_without_a_stack_says_where_it_looked(
    clean_env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MONGOMEM_URL", UNREACHABLE)
    code, out, _ = run(capsys, "memory", "status", "--local")
    assert code == 1
    assert f"nothing answers at {UNREACHABLE}" in out and "make dev" in out
    assert f"no local stack runs on {clean_env / '.mongomem'}" in out and "--data-dir" in out
