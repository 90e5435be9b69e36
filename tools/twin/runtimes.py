"""Lambda runtime lifecycle, as cfn-lint's table gives it (the data `sam validate --lint` checks with).

Lambda deprecates a runtime on a published date, then blocks creating functions on it, then updating
them ("Lambda runtimes", runtime deprecation policy). cfn-lint ships those dates in
cfnlint/data/AdditionalSpecs/LmbdRuntimeLifecycle.json; the twin reads the copy in the SAM CLI's
environment (.venv-sam), so upgrading cfn-lint upgrades the dates.
"""

from __future__ import annotations

import json
import re
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


@cache
def lifecycle_table(root: Path = ROOT) -> dict[str, dict[str, Any]]:
    found = sorted(
        root.glob(
            ".venv-sam/lib/python*/site-packages/cfnlint/data/AdditionalSpecs/LmbdRuntimeLifecycle.json"
        )
    )
    if not found:
        raise RuntimeError(
            "cfn-lint's runtime lifecycle table is missing: run `make sam-validate` (installs .venv-sam)"
        )
    table: dict[str, dict[str, Any]] = json.loads(found[-1].read_text(encoding="utf-8"))
    return table


def _date(text: str | None) -> date | None:
    return date.fromisoformat(text) if text else None


def deprecation(runtime: str) -> date | None:
    """When Lambda deprecates `runtime` (None: no date published)."""
    return _date((lifecycle_table().get(runtime) or {}).get("deprecated"))


def lifecycle_refusal(runtime: str, today: date | None = None) -> None:
    """Raise as CloudFormation would when Lambda blocks creating functions on `runtime`."""
    row = lifecycle_table().get(runtime)
    if row is None:
        raise RuntimeError(f"{runtime!r} is not a Lambda runtime cfn-lint knows")
    blocked = _date(row.get("create-block"))
    if blocked is not None and (today or date.today()) >= blocked:
        raise RuntimeError(
            f"The runtime parameter of {runtime} is no longer supported for creating or updating AWS Lambda "
            f"functions (blocked since {blocked}); use {row.get('successor') or 'a supported runtime'}"
        )


# The operating system under each runtime ("Lambda runtimes": python3.12 and later run on Amazon Linux
# 2023, python3.11 on Amazon Linux 2) and its glibc: a compiled wheel tagged for a newer glibc than this
# fails to import on Lambda, whatever `pip install --platform` accepted on the build machine.
RUNTIME_GLIBC = {"python3.13": (2, 34), "python3.12": (2, 34), "python3.11": (2, 26)}


def wheel_refusal(runtime: str, architecture: str, tags: list[str]) -> str | None:
    """Why a wheel with these tags (its WHEEL file's `Tag:` lines) cannot load on `runtime` (None: it can)."""
    machine = {"arm64": "aarch64", "x86_64": "x86_64"}[architecture]
    glibc = RUNTIME_GLIBC[runtime]
    legacy = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
    for tag in tags:
        for platform in tag.rsplit("-", 1)[-1].split("."):
            if platform == "any":
                return None
            found = re.fullmatch(r"(manylinux\d*)_(?:(\d+)_(\d+)_)?(\w+)", platform)
            if not found or found.group(4) != machine:
                continue
            needs = legacy.get(found.group(1)) or (int(found.group(2) or 99), int(found.group(3) or 0))
            if needs <= glibc:
                return None
    return f"no tag of {tags} loads on {runtime} ({architecture}, glibc {glibc[0]}.{glibc[1]})"
