"""What a twin function's interpreter may import, besides its own built code.

- the built layer (`.aws-sam/build/CoreLayer/python`), as `sam build` made it;
- the same pinned third-party versions installed for this machine's architecture (the build targets
  arm64; compiled wheels such as pydantic-core must match the host to load here), searched first;
- boto3 and its dependencies as the Lambda Python runtime provides them (/var/runtime on Lambda).
Installs are cached under .cache/twin by the exact pin set.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path


def pinned_dists(layer_python: Path) -> list[str]:
    """`name==version` of every distribution `sam build` put in the layer."""
    pins = []
    for meta in sorted(layer_python.glob("*.dist-info/METADATA")):
        text = meta.read_text(encoding="utf-8", errors="replace")
        name = re.search(r"^Name: (.+)$", text, re.M)
        version = re.search(r"^Version: (.+)$", text, re.M)
        if name and version:
            pins.append(f"{name.group(1).strip()}=={version.group(1).strip()}")
    return pins


def _install(target: Path, requirements: list[str], no_deps: bool) -> Path:
    if (target / ".complete").exists():
        return target
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--target",
        str(target),
    ]
    if no_deps:
        cmd.append("--no-deps")
    done = subprocess.run([*cmd, *requirements], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"pip could not install {requirements}:\n{done.stderr[-3000:]}")
    (target / ".complete").write_text("\n".join(requirements))
    return target


def host_layer(layer_python: Path, cache: Path) -> Path:
    """The layer's pinned distributions, built for this machine (no new versions, no extra packages)."""
    pins = pinned_dists(layer_python)
    if not pins:
        raise RuntimeError(f"{layer_python} holds no distributions: run `make sam-build` first")
    key = hashlib.sha256("\n".join(pins).encode()).hexdigest()[:16]
    return _install(cache / f"layer-host-{key}", pins, no_deps=True)


def runtime_libraries(cache: Path, boto3_version: str) -> Path:
    """boto3 (with botocore, s3transfer, jmespath, dateutil, six, urllib3) as the Lambda runtime ships it."""
    return _install(cache / f"runtime-boto3-{boto3_version}", [f"boto3=={boto3_version}"], no_deps=False)
