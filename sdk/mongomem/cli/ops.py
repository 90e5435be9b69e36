"""`mongomem keys ...` and `mongomem snapshots retry`: operator commands on a local or deployed service."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mongomem.cli.connection import add_data_dir, data_dir_of, running_stack
from mongomem.config import (
    DEFAULT_DB_NAME,
    DEFAULT_TENANT,
    ConfigError,
    EnvironmentSettings,
    environment,
    settings_from_env,
)
from mongomem.errors import MongomemError
from mongomem.kindnames import BuiltinKind


class NoLocalStack(Exception):
    """The data dir holds no local stack's data and none runs on it."""


def _deployed_env(args: argparse.Namespace) -> dict[str, str] | None:
    """Settings for a deployed database (--mongodb-uri or the MONGOMEM_* environment), else None."""
    env = environment()
    if getattr(args, "mongodb_uri", None):
        env["MONGOMEM_MONGODB_URI"] = args.mongodb_uri
    read = EnvironmentSettings.from_mapping(env)
    return env if read.mongodb_uri or read.mongodb_secret_arn else None


def _db_name() -> str:
    """The database the local stack serves (MONGOMEM_DB_NAME, as its functions read it)."""
    return EnvironmentSettings.from_mapping(environment()).db_name or DEFAULT_DB_NAME


def _answers(uri: str) -> bool:
    from mongomem.adapters.mongo import get_client  # lazy: 73 ms

    try:
        get_client(uri, serverSelectionTimeoutMS=2000).admin.command("ping")
        return True
    except Exception:
        return False


def running_database(data_dir: Path) -> tuple[str, str] | None:
    """(uri, db name) of the database a running local stack on `data_dir` serves, if one does."""
    from mongomem.local.lock import owner  # lazy: 1.6 ms
    from mongomem.local.stack import STACK_FILE  # lazy: 134 ms

    db_name = _db_name()
    stack_file = data_dir / STACK_FILE
    if stack_file.exists():
        try:
            info = json.loads(stack_file.read_text())
        except ValueError:
            info = {}
        if info.get("mongodb_uri") and _answers(info["mongodb_uri"]):
            return info["mongodb_uri"], info.get("db_name", db_name)
    # the owner of the data dir's server (a stack that died before writing stack.json, another command)
    held = owner(data_dir / "mongo")
    if held and held.get("uri") and _answers(held["uri"]):
        return held["uri"], db_name
    return None


@contextmanager
def open_db(args: argparse.Namespace, local_only: bool = False) -> Iterator[Any]:
    """The memory database: a deployed one, the running local stack's, or the local data folder's.

    With a local stack running, its server is used: a second server on a live data dir is never started.
    """
    from mongomem.adapters.mongo import durable_database, get_client  # lazy: 69 ms
    from mongomem.runtime import Services  # lazy: 109 ms

    env = None if local_only else _deployed_env(args)
    if env is not None:
        yield Services(settings_from_env(env)).db
        return
    from mongomem.local.mongod import EmbeddedMongo  # lazy: 73 ms

    data_dir = data_dir_of(args)
    running = running_database(data_dir)
    if running is not None:
        uri, name = running
        yield durable_database(get_client(uri), name)
        return
    if not (data_dir / "mongo").exists():
        # Never start an empty database here: a key made in it would be one the running stack refuses.
        raise NoLocalStack(
            f"no local stack data in {data_dir.resolve()}: start `mongomem dev` (it creates it), or point "
            "at the data dir your stack runs with (--data-dir or MONGOMEM_DATA_DIR; `make dev` uses "
            ".mongomem in the repository), or at a deployed one with --stack / --mongodb-uri"
        )
    # No stack running: open the local data folder with a short-lived server (it takes the data dir's
    # lock, so a stack starting meanwhile reports this command's PID instead of corrupting the data).
    mongo = EmbeddedMongo(data_dir / "mongo").start()
    try:
        yield durable_database(get_client(mongo.uri), _db_name())
    finally:
        from mongomem.adapters.mongo import close_clients  # lazy: 81 ms

        close_clients()
        mongo.stop()


def _print_key(record: dict[str, Any], plaintext: str) -> None:
    print(f"key id   {record['_id']}\ntenant   {record['tenant']}\nkind     {record['kind']}")
    if record.get("fixed_user_id"):
        print(f"user     {record['fixed_user_id']}  (every call of this key acts as this memory user)")
    print(f"\n{plaintext}\n\nSend it as the x-api-key header. It is shown only now; store it safely.")


def _keys_deployed(args: argparse.Namespace) -> int:
    """A deployed stack's keys, through its IAM-authorized /v1/admin/keys routes (SigV4, no database access)."""
    from mongomem.cli.memory_deployed import DeployedTarget, DeployError  # lazy: 3.8 ms
    from mongomem.client import MemoryClientError  # lazy: 168 ms

    try:
        api = DeployedTarget(args.stack, region=args.region).api()
        if args.keys_command == "create":
            body = {"tenant": args.tenant, "kind": args.kind, "user": args.user_id, "name": args.name}
            answer = api.request("POST", "/v1/admin/keys", body={k: v for k, v in body.items() if v})
            _print_key(answer["key"], answer["api_key"])
        elif args.keys_command == "list":
            for r in api.request("GET", "/v1/admin/keys", {"tenant": args.tenant} if args.tenant else None)[
                "keys"
            ]:
                state = f"revoked {r['revoked_at'][:10]}" if r.get("revoked_at") else "active"
                print(
                    f"{r['_id']}  {r['tenant']:<16} {r['kind']:<16} user={r.get('fixed_user_id') or '-':<20} {state}"
                )
        else:
            api.request("DELETE", f"/v1/admin/keys/{args.key_id}")
            print(f"revoked {args.key_id} (cached authorizer answers expire within 300 s)")
    except DeployError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except MemoryClientError as err:
        print(f"error: {err.status} {err.code}: {err.message}", file=sys.stderr)
        return 1
    return 0


def _keys(args: argparse.Namespace) -> int:
    from mongomem.adapters.mongo import MongoDatabase  # lazy: 77 ms
    from mongomem.adapters.mongo.api_keys import MongoApiKeyRepository  # lazy: 77 ms
    from mongomem.identity.service import create_key, revoke_key  # lazy: 5.2 ms

    if getattr(args, "stack", None):
        return _keys_deployed(args)
    local = _deployed_env(args) is None
    with open_db(args) as db:
        store = MongoApiKeyRepository(MongoDatabase.wrap(db))
        store.ensure_indexes()
        if args.keys_command == "create":
            first = not store.any()
            plaintext, record = create_key(store, args.tenant, args.kind, args.user_id, args.name)
            _print_key(record, plaintext)
            if local:
                _after_local_create(args, db, plaintext, first)
        elif args.keys_command == "list":
            rows = [key.public() for key in store.list(args.tenant)]
            if not rows:
                print("no API keys (the local stack runs open until one exists)")
            for r in rows:
                state = f"revoked {r['revoked_at']:%Y-%m-%d}" if r.get("revoked_at") else "active"
                user = r.get("fixed_user_id") or "-"
                print(
                    f"{r['_id']}  {r['tenant']:<16} {r['kind']:<16} user={user:<20} {state}  {r.get('name') or ''}"
                )
        else:
            others = [k for k in store.list() if k.revoked_at is None and k.key_id != args.key_id]
            target = store.get(args.key_id)
            if local and target is not None and target.revoked_at is None and not others and not args.force:
                print(
                    f"error: {args.key_id} is the last active key of this stack. Once keys exist the local "
                    "stack never runs open again, so after revoking it every request is refused until "
                    "`mongomem keys create` makes a new one. Create the replacement first, or pass --force.",
                    file=sys.stderr,
                )
                return 1
            revoke_key(store, args.key_id)
            print(f"revoked {args.key_id} (cached authorizer answers expire within 300 s)")
            if local and not others:
                print("no active key is left: create one with `mongomem keys create` to use the API again")
    return 0


def _after_local_create(args: argparse.Namespace, db: Any, plaintext: str, first: bool) -> None:
    """Tell what the new key changes for the local stack, and check that the running one takes it."""
    from mongomem.adapters.mongo import MongoDatabase  # lazy: 88 ms
    from mongomem.adapters.mongo.directory import MongoDirectoryRepository  # lazy: 96 ms

    open_tenant = EnvironmentSettings.from_mapping(environment()).tenant_default or DEFAULT_TENANT
    if first:
        print(
            "\nThis is the stack's first key: from now on every request needs an x-api-key header "
            "(the local stack ran open until now)."
        )
        if args.tenant != open_tenant:
            users = MongoDirectoryRepository(MongoDatabase.wrap(db)).users(open_tenant, limit=1000)
            sessions, memories = sum(u.sessions for u in users), sum(u.memories for u in users)
            if users:
                print(
                    f"warning: what was recorded while the stack ran open ({len(users)} user(s), "
                    f"{sessions} session(s), {memories} memories) belongs to tenant {open_tenant!r}; "
                    f"this key is tenant {args.tenant!r} and does not see it. To keep using that data, "
                    f"create a key with --tenant {open_tenant}.",
                    file=sys.stderr,
                )
    api = running_stack(data_dir_of(args)).get("api")
    if not api:
        print(
            f"no local stack runs on {data_dir_of(args)} now; the key works once `mongomem dev` starts on it"
        )
        return
    from mongomem.client import MemoryClient, MemoryClientError  # lazy: 161 ms

    try:
        with MemoryClient(api, api_key=plaintext, timeout=10, retries=1) as client:
            client.request("GET", "/v1/users", {"limit": 1})
        print(f"checked: the stack at {api} accepts it")
    except MemoryClientError as err:
        print(f"warning: the stack at {api} did not accept the new key: {err}", file=sys.stderr)


def _snapshots_retry(args: argparse.Namespace) -> int:
    from mongomem.ops.dlq import SnapshotStatuses, SqsRedrive  # lazy: 82 ms
    from mongomem.ops.redrive import describe, retry_local, retry_sqs  # lazy: 91 ms

    types = [args.type] if args.type else [t.value for t in BuiltinKind]
    reports = []
    if args.stack:
        import boto3  # lazy: 95 ms

        session = boto3.session.Session(region_name=args.region)
        redrive = SqsRedrive(session.client("sqs"), session.client("cloudformation"))
        urls = redrive.dlq_urls(args.stack)
        if _deployed_env(args) is not None:
            with open_db(args) as db:
                reports = [retry_sqs(redrive, urls, SnapshotStatuses(db), t) for t in types]
        else:
            reports = [retry_sqs(redrive, urls, None, t) for t in types]
    else:
        from mongomem.local.queue import LocalQueue  # lazy: 70 ms

        with open_db(args, local_only=True) as db:
            queue = LocalQueue(db)
            reports = [retry_local(queue, SnapshotStatuses(db), t) for t in types]
    for report in reports:
        print(json.dumps(describe(report)))
    return 0


def _guarded(func: Any) -> Any:
    def run(args: argparse.Namespace) -> int:
        from mongomem.local.lock import DataDirBusy  # lazy: 1.7 ms

        try:
            return int(func(args))
        except MongomemError as exc:
            print(f"error: {exc.message}", file=sys.stderr)
            return 1
        except ConfigError as exc:
            print(f"error: {exc.one_line()}", file=sys.stderr)
            return 2
        except (DataDirBusy, NoLocalStack) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1

    return run


def register(sub: Any) -> None:
    """Add the `keys` and `snapshots` commands to the `mongomem` parser."""
    keys = sub.add_parser("keys", help="create, list and revoke API keys (x-api-key)")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True)
    create = keys_sub.add_parser("create", help="create a key; prints it once")
    create.add_argument("--tenant", required=True)
    create.add_argument("--kind", required=True, choices=["service_account", "memory_service"])
    create.add_argument(
        "--user-id", "--user", dest="user_id", help="service accounts: the memory user every call acts as"
    )
    create.add_argument("--name", help="a label for humans")
    listing = keys_sub.add_parser("list", help="list keys (never their secrets)")
    listing.add_argument("--tenant")
    revoke = keys_sub.add_parser("revoke", help="revoke a key by its id")
    revoke.add_argument("key_id")
    revoke.add_argument(
        "--force", action="store_true", help="revoke the local stack's last active key too (locks the API)"
    )
    for parser in (create, listing, revoke):
        _db_options(parser)
        parser.add_argument(
            "--stack",
            default=environment().get("MONGOMEM_STACK") or None,
            help="a deployed stack (SigV4 admin API)",
        )
        parser.add_argument("--region", default=environment().get("AWS_REGION"))
    keys.set_defaults(func=_guarded(_keys))

    snapshots = sub.add_parser("snapshots", help="snapshot operations")
    snap_sub = snapshots.add_subparsers(dest="snapshots_command", required=True)
    retry = snap_sub.add_parser(
        "retry", help="re-drive dead-lettered extraction messages; statuses -> queued"
    )
    retry.add_argument("--type", choices=[t.value for t in BuiltinKind])
    where = retry.add_mutually_exclusive_group()
    where.add_argument("--local", action="store_true", help="the local stack (default)")
    where.add_argument("--stack", metavar="NAME", help="a deployed CloudFormation stack")
    retry.add_argument("--region", default=environment().get("AWS_REGION"))
    _db_options(retry)
    snapshots.set_defaults(func=_guarded(_snapshots_retry))


def _db_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mongodb-uri", help="a deployed database (default: MONGOMEM_MONGODB_URI, else the local stack's)"
    )
    add_data_dir(parser)
