"""`mongomem memory configure | apply | status`: the memory configuration of a stack, local or deployed.

The local stack's target is in mongomem.cli.memory_local, a deployed stack's in memory_deployed.

- configure: validate project-config.yaml and upload it (SSM Parameter Store for a deployed stack;
  `<data dir>/project-config.yaml` for the local stack, which `mongomem dev` starts with).
- apply: push the uploaded config into the functions and wait (--wait) until the service is ready.
  It refuses, before changing anything, a config whose LLM provider has no usable key here.
- status: the applied config, provider readiness, queue and DLQ depths, the promotion and
  extraction backlog.

A deployed stack is found by name (--stack, or MONGOMEM_STACK); otherwise the local stack at
http://127.0.0.1:3000 is used. A running local stack takes a new config through `LocalControl`,
which `mongomem dev` runs next to the stack: apply drops a request in the data dir, the stack
reloads its settings and acknowledges, and apply then waits for GET /v1/status to say ready.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from mongomem.cli.config_files import CommandError, parse_config_text
from mongomem.cli.config_files import enabled_kinds as _enabled
from mongomem.cli.connection import DEFAULT_URL, add_api_options, connection
from mongomem.config import (
    ConfigError,
    EmbeddingProviderConfig,
    LLMProviderConfig,
    ProjectConfig,
    environment,
    parse_project_config,
    provider_choice,
)

T = TypeVar("T")

if TYPE_CHECKING:
    from mongomem.cli.memory_deployed import DeployedTarget
    from mongomem.cli.memory_local import LocalTarget

OPENAI_HOST = "api.openai.com"


# -- config and provider checks -------------------------------------------------------------------


def local_providers(cfg: ProjectConfig) -> tuple[LLMProviderConfig, EmbeddingProviderConfig]:
    """The providers a local stack runs for this config (unset kinds: the offline extractor, the local model)."""

    chosen = cfg.memory.providers
    return (
        provider_choice(LLMProviderConfig(kind="offline"), chosen.llm),
        provider_choice(EmbeddingProviderConfig(kind="local"), chosen.embeddings),
    )


def key_variables(cfg: ProjectConfig) -> list[str]:
    """The environment variables that hold the configured providers' API keys."""
    from mongomem.cli.memory_deployed import needed_keys  # lazy: 4.1 ms

    return needed_keys(*local_providers(cfg))


def provider_problems(cfg: ProjectConfig, environ: Mapping[str, str]) -> list[str]:
    """Why the configured providers could not work with these variables (no network calls)."""
    from mongomem.providers.factory import embedder_from_config, llm_from_config  # lazy: 5.8 ms

    problems = []
    llm_cfg, emb_cfg = local_providers(cfg)
    try:
        ok, reason = llm_from_config(llm_cfg, environ).ready()
        if not ok:
            problems.append(f"llm ({llm_cfg.kind}): {reason}")
    except ConfigError as exc:
        problems.append(str(exc))
    # Key-based embedders only: the local model's readiness means loading it, which is not a key check.
    if emb_cfg.kind in ("voyage", "openai-compatible"):
        try:
            ok, reason = embedder_from_config(emb_cfg, environ).ready()
            if not ok:
                problems.append(f"embeddings ({emb_cfg.kind}): {reason}")
        except ConfigError as exc:
            problems.append(str(exc))
    return problems


def _check_providers(cfg: ProjectConfig, environ: Mapping[str, str]) -> dict[str, str]:
    """The key variables to hand to the service; CommandError naming each unusable provider."""
    problems = provider_problems(cfg, environ)
    if problems:
        lines = "\n".join(f"  {p}" for p in problems)
        raise CommandError(f"not applied (nothing was changed): the providers are not usable:\n{lines}")
    return {name: environ[name] for name in key_variables(cfg) if environ.get(name)}


# -- commands ------------------------------------------------------------------------------------


def _deployed(args: argparse.Namespace) -> DeployedTarget | None:
    if not args.stack or args.local:
        return None
    from mongomem.cli.memory_deployed import DeployedTarget  # lazy: 4.4 ms

    env = environment()
    return DeployedTarget(
        args.stack,
        region=args.region,
        profile=args.profile,
        base_url=args.base_url or env.get("MONGOMEM_URL") or None,
        api_key=args.api_key or env.get("MONGOMEM_API_KEY") or None,
    )


def _local(args: argparse.Namespace) -> LocalTarget:
    from mongomem.cli.memory_local import LocalTarget  # lazy: 309 ms

    conn = connection(args)
    return LocalTarget(conn.data_dir, conn.base_url, mongodb_uri=args.mongodb_uri, api_key=conn.api_key)


def _deploy_errors(run: Callable[[], T]) -> T:
    from mongomem.cli.memory_deployed import DeployError  # lazy: 4.8 ms

    try:
        return run()
    except DeployError as exc:
        raise CommandError(str(exc)) from exc


def cmd_configure(args: argparse.Namespace, out: TextIO) -> int:
    path = Path(args.config)
    if not path.exists():
        raise CommandError(f"{path} not found", code=2)
    text = path.read_text(encoding="utf-8")
    cfg = parse_config_text(text, str(path))
    deployed = _deployed(args)
    if deployed is not None:
        import yaml  # lazy: 12 ms

        where = _deploy_errors(lambda: deployed.configure(yaml.safe_load(text)))
    else:
        where = _local(args).configure(text, cfg)
    print(
        f"{path} is valid (extraction: {', '.join(_enabled(cfg)) or 'none'}); uploaded to {where}", file=out
    )
    print("next: `mongomem memory apply --wait`" + (f" --stack {args.stack}" if args.stack else ""), file=out)
    return 0


def cmd_apply(args: argparse.Namespace, out: TextIO, environ: Mapping[str, str] | None = None) -> int:
    deployed = _deployed(args)
    if deployed is not None:
        return _deploy_errors(lambda: _apply_deployed(deployed, args, out))
    target = _local(args)
    text, where = target.uploaded()
    cfg = parse_config_text(text, where)
    env = environment() if environ is None else dict(environ)
    secrets = _check_providers(cfg, env)
    print(
        f"applying {where} to the {target.describe()} (extraction: {', '.join(_enabled(cfg)) or 'none'})",
        file=out,
    )
    target.apply(cfg, text, secrets, args.wait, args.timeout, out)
    print("applied; the memory service is ready" if args.wait else "apply requested", file=out)
    return 0


def _apply_deployed(target: DeployedTarget, args: argparse.Namespace, out: TextIO) -> int:
    text, version = target.uploaded(args.version)
    cfg = parse_project_config(json.loads(text), f"{target.parameter}:{version}")
    problems = target.check(cfg)
    if problems:
        lines = "\n".join(f"  {p}" for p in problems)
        raise CommandError(f"not applied (nothing was changed): the stack cannot run this config:\n{lines}")
    print(
        f"applying {target.parameter} version {version} to {target.describe()} "
        f"(extraction: {', '.join(_enabled(cfg)) or 'none'})",
        file=out,
        flush=True,
    )
    target.apply(version, text, args.wait, args.timeout, out)
    print(f"applied; every function runs version {version}" if args.wait else "applied", file=out)
    return 0


def cmd_status(args: argparse.Namespace, out: TextIO) -> int:
    deployed = _deployed(args)
    report = _deploy_errors(deployed.status) if deployed is not None else _local(args).status()
    if args.json:
        print(json.dumps(report, indent=2, default=str), file=out)
    else:
        print(render_status(report), file=out)
    service = report.get("service") or {}
    return 0 if service.get("ready") else 1


def render_status(report: dict[str, Any]) -> str:
    service = report.get("service") or {}
    return "\n".join(
        [
            f"mongomem memory status: {report['target']}",
            *_config_lines(report.get("config") or {}),
            *_service_lines(service),
            *_backlog_lines(report.get("backlog") or {}, service),
            *_queue_lines(report.get("queues") or {}),
        ]
    )


def _config_lines(config: dict[str, Any]) -> list[str]:
    """The applied config (local stack) or each function's version (deployed stack)."""
    lines = []
    applied = config.get("applied")
    if isinstance(applied, dict) and "sha256" in applied:
        lines.append(
            f"config      applied {str(applied['sha256'])[:12]} at {applied.get('applied_at')} from {applied.get('source')}"
        )
        if applied.get("error"):
            lines.append(f"            last apply refused: {applied['error']}")
    elif "functions" in config:
        lines.append(
            f"config      {config.get('parameter')}: uploaded version {config.get('uploaded')}, "
            f"applied version {config.get('applied')}"
        )
        for name, row in config["functions"].items():
            runs = f"version {row['version']}" if row.get("version") else row.get("config")
            state = "ready" if row.get("ready") else "not ready: " + "; ".join(row.get("reasons") or [])
            lines.append(f"  {name:<22} runs {runs}, {state}")
    if config.get("pending_apply"):
        lines.append("            the uploaded config is not applied yet: run `mongomem memory apply --wait`")
    return lines


def _service_lines(service: dict[str, Any]) -> list[str]:
    """Readiness, the providers and the extraction kinds."""
    if "error" in service:
        return [f"service     unavailable: {service['error']}"]
    llm, emb = service.get("llm") or {}, service.get("embeddings") or {}
    lines = [f"ready       {'yes' if service.get('ready') else 'no'}"]
    for reason in service.get("reasons") or []:
        lines.append(f"            {reason}")
    lines.append(
        f"  llm         {llm.get('name')} ({llm.get('kind')}): {'ready' if llm.get('ready') else llm.get('reason')}"
    )
    lines.append(
        f"  embeddings  {emb.get('model')} dim {emb.get('dim')}: {'ready' if emb.get('ready') else emb.get('reason')}"
    )
    lines.append(f"extraction  {', '.join((service.get('extraction') or {}).get('enabled') or []) or 'none'}")
    lines.extend(_suspect_empty(service))
    return lines


def _backlog_lines(read: dict[str, Any], service: dict[str, Any]) -> list[str]:
    """Every tenant's figures when the CLI could read MongoDB, else what the API shows its caller."""
    figures = read if read and "error" not in read else service
    if not figures or "error" in figures:
        return []
    scope = read.get("scope") or service.get("backlog_scope") or "the API key's tenant"
    pending = figures.get("snapshots_pending_extraction") or {}
    text = "; ".join(
        f"{t} " + ", ".join(f"{s} {n}" for s, n in sorted(v.items())) for t, v in sorted(pending.items())
    )
    return [
        f"backlog     ({scope})",
        f"sessions pending promotion: {figures.get('sessions_pending_promotion', '?')}",
        f"snapshots pending extraction: {text or 'none'}",
    ]


def _queue_lines(queues: dict[str, Any]) -> list[str]:
    """Each queue's visible, in-flight and dead-letter depths."""
    if "error" in queues:
        return [f"queues      unavailable: {queues['error']}"]
    lines = [f"{'queue':<12}{'visible':>9}{'in flight':>11}{'dlq':>7}"]
    for name, row in queues.items():
        lines.append(
            f"{name:<12}{row.get('visible', '-'):>9}{row.get('in_flight', '-'):>11}{row.get('dlq', '-'):>7}"
        )
    return lines


def _suspect_empty(service: dict[str, Any]) -> list[str]:
    """What the status says about an extractor answering nothing where the offline rules find facts."""
    figure = (service.get("extraction") or {}).get("suspect_empty") or {}
    if not figure.get("suspect"):
        return []
    kinds = figure.get("kinds") or {}
    flagged = ", ".join(
        f"{k} ({row.get('empty_answers')} empty)" for k, row in kinds.items() if row.get("suspect")
    )
    lines = [f"            suspect: the model answers nothing in the last hour: {flagged}"]
    lines += textwrap.wrap(
        str(figure.get("hint") or ""), 100, initial_indent=" " * 12, subsequent_indent=" " * 12
    )
    return lines


def _run(handler: Callable[..., int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args, sys.stdout)
        except ConfigError as exc:
            print(str(exc), file=sys.stderr)
            return 2
        except CommandError as exc:
            print(str(exc), file=sys.stderr)
            return exc.code

    return run


def register(sub: Any) -> None:
    """Add `memory configure|apply|status` to the `mongomem` command's subparsers."""

    memory = sub.add_parser("memory", help="configure, apply and inspect the memory configuration of a stack")
    msub = memory.add_subparsers(dest="memory_command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        where = p.add_mutually_exclusive_group()
        where.add_argument(
            "--local", action="store_true", help="the local stack (the default without --stack)"
        )
        where.add_argument(
            "--stack",
            default=environment().get("MONGOMEM_STACK") or None,
            help="a deployed stack's name ($MONGOMEM_STACK)",
        )
        p.add_argument("--region", default=None, help="AWS region of the stack (default: your AWS config)")
        p.add_argument("--profile", default=None, help="AWS profile")
        add_api_options(
            p,
            url_help=f"the memory API ($MONGOMEM_URL; local: the stack running on --data-dir, else "
            f"{DEFAULT_URL}; deployed: the stack's ApiUrl output). Without an API key a deployed API is "
            "called with SigV4",
        )
        p.add_argument(
            "--mongodb-uri", default=None, help="the local stack's MongoDB (default: found in the data dir)"
        )

    configure = msub.add_parser("configure", help="validate project-config.yaml and upload it")
    common(configure)
    configure.add_argument("--config", default="project-config.yaml")
    configure.set_defaults(func=_run(cmd_configure))

    apply = msub.add_parser("apply", help="apply the uploaded config to the functions")
    common(apply)
    apply.add_argument("--wait", action="store_true", help="wait until every function runs it, ready")
    apply.add_argument(
        "--version", type=int, default=None, help="deployed: the version to apply (default: latest)"
    )
    apply.add_argument("--timeout", type=float, default=300.0, help="seconds --wait waits")
    apply.set_defaults(func=_run(cmd_apply))

    status = msub.add_parser("status", help="applied config, readiness, queues and backlog")
    common(status)
    status.add_argument("--json", action="store_true")
    status.set_defaults(func=_run(cmd_status))


def register_mcp(sub: Any) -> None:
    """Add `mcp` (the MCP server) to the `mongomem` command's subparsers."""
    from mongomem import mcp_server  # lazy: 227 ms

    parser = sub.add_parser("mcp", help="serve the memory to MCP clients (stdio or streamable HTTP)")
    mcp_server.add_arguments(parser)
    parser.set_defaults(func=mcp_server.run)
