"""Settings for commands that work on the database itself (`reindex`, `migrate`): deployed or local.

A deployed database is named by the MONGOMEM_* variables a function would get (MONGOMEM_MONGODB_URI or
MONGOMEM_MONGODB_SECRET_ARN, MONGOMEM_OPENSEARCH_ENDPOINT ...). Without them the command works on the
local stack's data dir (--data-dir / MONGOMEM_DATA_DIR, default .mongomem) as `mongomem dev` would run
it: its MongoDB files, its embedded vector index, its project config. The local stack must be stopped
for that: it holds the embedded index in memory and would not see the rebuilt one.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mongomem.cli.config_files import dev_config
from mongomem.cli.connection import data_dir_of, running_stack
from mongomem.config import EnvironmentSettings, environment, settings_from_env


class LocalStackRunning(Exception):
    """The data dir is served by a running `mongomem dev`."""


@contextmanager
def settings_for(args: argparse.Namespace, command: str) -> Iterator[Any]:
    """The Settings the command works with; a local data dir's server runs while the block does."""
    env = environment()
    read = EnvironmentSettings.from_mapping(env)
    if read.mongodb_uri or read.mongodb_secret_arn:
        yield settings_from_env(env)
        return
    from mongomem.cli.ops import running_database  # lazy: 3.6 ms
    from mongomem.local.mongod import EmbeddedMongo  # lazy: 100 ms
    from mongomem.local.stack import local_environment  # lazy: 168 ms

    data_dir = data_dir_of(args).resolve()
    if not (data_dir / "mongo").exists():
        raise LocalStackRunning(
            f"no local stack data in {data_dir} (set --data-dir or MONGOMEM_DATA_DIR to the folder "
            "`mongomem dev` uses, or MONGOMEM_MONGODB_URI for a deployed database)"
        )
    if running_database(data_dir) is not None:
        where = running_stack(data_dir).get("api") or "a running process"
        raise LocalStackRunning(
            f"the local stack on {data_dir} is running ({where}): stop `mongomem dev` first, run "
            f"`mongomem {command}`, then start it again (it holds the local index in memory)"
        )
    env = local_environment(env, data_dir, dev_config(None, data_dir))
    mongo = EmbeddedMongo(data_dir / "mongo").start()
    try:
        yield settings_from_env(env, mongodb_uri=mongo.uri)
    finally:
        from mongomem.adapters.mongo.driver import close_client  # lazy: 98 ms

        # this server's client only: closing a client whose server is gone waits out its server selection
        # (5 s each), and the process may hold others (a test run's stacks, stopped long ago)
        close_client(mongo.uri)
        mongo.stop()
