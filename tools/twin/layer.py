"""What a twin function's interpreter may import, besides its own built code.

- the built layer (`.aws-sam/build/CoreLayer/python`), as `sam build` made it;
- the same pinned third-party versions installed for this machine's architecture and the runtime's
  Python (the build targets arm64; compiled wheels such as pydantic-core must match the host to load
  here), searched first - the layer's own boto3 and botocore among them;
- boto3 and its dependencies as the Lambda Python runtime provides them, searched last (on Lambda,
  /opt/python comes before the runtime's own packages in sys.path: what the layer ships wins).
  AWS does not publish which SDK a runtime bundles ("Runtime-included SDK versions": it depends on the
  runtime version and the Region, and changes under you); the twin gives each runtime the SDK of its
  launch (RUNTIME_SDK), older than anything the code may rely on, so a function that imports boto3 from
  the runtime instead of the layer meets an SDK that lacks newer APIs, as it could on Lambda.
Installs are cached under .cache/twin by the exact pin set.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
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


# The boto3 a runtime was launched with (python3.13: November 2024). Botocore of that date knows Bedrock
# Converse but not its `cachePoint` content blocks.
RUNTIME_SDK = {"python3.13": "1.35.59", "python3.12": "1.34.84", "python3.11": "1.34.84"}


def _install(target: Path, requirements: list[str], no_deps: bool, python: Path) -> Path:
    if (target / ".complete").exists():
        return target
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    cmd = [
        str(python),
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


def host_layer(layer_python: Path, cache: Path, runtime: str = "python3.13") -> Path:
    """The layer's pinned distributions, built for this machine and the runtime's Python (no new versions,
    no extra packages)."""
    from .lambda_rt import interpreter

    pins = pinned_dists(layer_python)
    if not pins:
        raise RuntimeError(f"{layer_python} holds no distributions: run `make sam-build` first")
    key = hashlib.sha256("\n".join([runtime, *pins]).encode()).hexdigest()[:16]
    return _install(cache / f"layer-host-{key}", pins, no_deps=True, python=interpreter(runtime))


def runtime_libraries(cache: Path, runtime: str = "python3.13") -> Path:
    """boto3 (with botocore, s3transfer, jmespath, dateutil, six, urllib3) as the Lambda runtime ships it."""
    from .lambda_rt import interpreter

    version = RUNTIME_SDK[runtime]
    target = cache / f"runtime-{runtime}-boto3-{version}"
    return _install(target, [f"boto3=={version}"], no_deps=False, python=interpreter(runtime))
