"""Shared pieces of the benches: quiet handlers, API events, percentiles, the result line, profiles.

Imported by the bench scripts (`python bench/<name>.py` puts bench/ on sys.path). Stdlib only, plus
the repository's own tests/conftest.py helpers (load_function, load_event, Ctx) for real handlers.
"""

from __future__ import annotations

import contextlib
import cProfile
import io
import json
import math
import os
import pstats
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for extra in (ROOT, ROOT / "tools"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

# Powertools reads these itself: quiet logs, no X-Ray. Metrics stay on (their EMF lines are formatted
# as in Lambda and swallowed by `quiet()`), so a handler costs what it costs deployed.
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "mongomem")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "mongomem-bench")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")

RESULT_OUT = sys.stdout  # the one JSON line goes here; everything else goes to stderr


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def emit(result: dict[str, Any]) -> None:
    """The bench's one JSON line of named keys, on the real stdout."""
    print(json.dumps(result, default=str), file=RESULT_OUT, flush=True)


_SINK = io.StringIO()


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Swallow what a handler prints to stdout (EMF metric lines) without skipping its formatting."""
    with contextlib.redirect_stdout(_SINK):
        yield
    _SINK.seek(0)
    _SINK.truncate()


def api_event(method: str, path: str, body: Any = None, query: str = "") -> dict[str, Any]:
    """An API Gateway HTTP API (v2) event like events/*.json, for the memory_api handler."""
    from tests.conftest import load_event

    event = load_event("memory_search.json")
    event["routeKey"] = f"{method} {path}"
    event["rawPath"] = path
    event["rawQueryString"] = query
    event["requestContext"] = dict(event["requestContext"])
    event["requestContext"]["routeKey"] = event["routeKey"]
    event["requestContext"]["http"] = dict(event["requestContext"]["http"], method=method, path=path)
    event["body"] = json.dumps(body) if body is not None else None
    if query:
        from urllib.parse import parse_qsl

        event["queryStringParameters"] = dict(parse_qsl(query))
    return event


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation between closest ranks."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    pos = (len(ordered) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else math.nan


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(milliseconds, result) of one call."""
    started = time.perf_counter()
    result = fn()
    return (time.perf_counter() - started) * 1000.0, result


def profile_top(fn: Callable[[], Any], repeat: int = 1, limit: int = 25, root: str = "") -> str:
    """cProfile `fn` `repeat` times; the functions with the most cumulative time, as text."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(repeat):
        fn()
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).sort_stats("cumulative")
    if root:
        stats.print_stats(root, limit)
    else:
        stats.print_stats(limit)
    return out.getvalue()


def r(value: float, digits: int = 2) -> float:
    return round(value, digits) if not math.isnan(value) else value


def machine() -> dict[str, Any]:
    """Where the figures came from: cores, load, Python."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (math.nan,) * 3
    return {
        "cpus": os.cpu_count(),
        "load_1m_at_end": round(load[0], 2),
        "python": sys.version.split()[0],
    }


# -- synthetic long-term memories of every kind ----------------------------------------------------
ATTRIBUTES = {
    "home airport": ["LIS", "OPO", "MAD", "CDG", "BER", "FCO", "OSL", "VIE", "AMS", "DUB"],
    "favourite food": ["sushi", "ramen", "tacos", "paella", "curry", "falafel", "pho", "risotto"],
    "employer": ["Acme Corp", "Globex", "Initech", "Umbrella", "Hooli", "Stark Industries"],
    "pet": ["a beagle named Max", "two cats", "a parrot", "a golden retriever", "a rabbit"],
    "hobby": ["climbing", "pottery", "chess", "sailing", "birdwatching", "painting", "running"],
    "home city": ["Lisbon", "Porto", "Madrid", "Paris", "Berlin", "Rome", "Oslo", "Vienna"],
    "diet": ["vegetarian", "vegan", "pescatarian", "gluten free", "no restrictions"],
    "language": ["Portuguese", "Spanish", "French", "German", "Italian", "Norwegian"],
}
PLACES = ["the harbour", "a rooftop bar", "the museum", "the old town", "the climbing gym", "the office"]
ACTIVITIES = ["dinner", "a hike", "a concert", "a workshop", "a birthday party", "a road trip"]
PEOPLE = ["Ana", "Bruno", "Carla", "Diego", "Elena", "Farid", "Greta", "Hugo", "Ines", "Jonas"]
TASKS = [
    "book a flight",
    "file an expense report",
    "deploy the service",
    "reset the router",
    "plan a sprint",
    "order groceries",
]
TERMS = ["SLA", "OKR", "RTO", "MFA", "KYC", "ETA", "SKU", "NPS", "TCO", "CI"]
WORDS = (
    "amber basil cedar delta ember fjord garnet harbor iris juniper kelp lotus maple nectar onyx "
    "pepper quartz raven saffron tundra umber velvet willow xenon yarrow zephyr acorn birch comet dune"
).split()
KIND_MIX = ("semantic",) * 4 + ("episodic",) * 3 + ("procedural",) * 2 + ("taxonomic",)


def memory_payload(kind: str, rng: Any, n: int) -> dict[str, Any]:
    """A valid payload of `kind` with some distinctive words (`rng` is a random.Random)."""
    tag = " ".join(rng.sample(WORDS, 2))
    if kind == "semantic":
        attribute = rng.choice(list(ATTRIBUTES))
        return {
            "subject": "user",
            "attribute": f"{attribute} {n}",
            "value": f"{rng.choice(ATTRIBUTES[attribute])} ({tag})",
        }
    if kind == "episodic":
        who = rng.sample(PEOPLE, 2)
        what, where = rng.choice(ACTIVITIES), rng.choice(PLACES)
        day = f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        return {
            "title": f"{what} at {where} {n}",
            "summary": f"{who[0]} and {who[1]} went to {what} at {where}; they talked about {tag}.",
            "participants": who,
            "occurred_at": day,
            "place": where,
        }
    if kind == "procedural":
        task = rng.choice(TASKS)
        return {
            "name": f"how to {task} {n}",
            "when_to_use": f"when the user asks to {task} ({tag})",
            "steps": [f"check the {w}" for w in rng.sample(WORDS, 3)],
        }
    term = rng.choice(TERMS)
    return {
        "term": f"{term}-{n}",
        "definition": f"{term} as this team uses it: {tag} {rng.choice(WORDS)}",
        "aliases": [term.lower()],
    }


def query_near(text: str, rng: Any) -> str:
    """A query from a stored text's neighbourhood: some of its words dropped, one unrelated word added."""
    words = [w for w in text.replace(":", " ").replace(";", " ").split() if w.strip("(),.")]
    keep = max(3, int(len(words) * 0.6))
    picked = sorted(rng.sample(range(len(words)), min(keep, len(words))))
    out = [words[i].strip("(),.") for i in picked]
    out.insert(rng.randint(0, len(out)), rng.choice(WORDS))
    return " ".join(out)
