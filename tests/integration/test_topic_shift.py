"""Topic-shift promotion (memory.snapshot.topic_shift): the scan cuts a session where its topic changes.

Conversations whose topic changes at a known turn are recorded through the record handler, go idle,
and the scan handler promotes them with the bundled local embedding model (multilingual e5, the one
`make dev` uses; no network): the first snapshot ends within one turn of the change, the next one holds
the new topic. Conversations on one topic stay one snapshot. SecantusDB is the store.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from mongomem.config import parse_project_config
from mongomem.local.queue import local_queue_factory
from mongomem.providers.embed_local import LocalEmbedderProvider
from mongomem.runtime import Services
from tests import helpers
from tests.conftest import load_event, load_function

# (name, turns, index of the first turn of the new topic; None: one topic throughout)
SHIFTS = [
    (
        "travel to cooking",
        [
            "I'm planning a trip to Japan next spring.",
            "Great! Are you thinking Tokyo and Kyoto?",
            "Yes, and maybe Osaka. How long should I stay in Kyoto?",
            "Three days in Kyoto lets you see the temples and Arashiyama.",
            "Should I get a JR rail pass for the trains?",
            "If you travel Tokyo-Kyoto-Osaka by shinkansen the rail pass usually pays off.",
            "By the way, how do I make a good risotto?",
            "Toast arborio rice in butter, then add warm stock a ladle at a time.",
            "Should I stir it all the time?",
            "Stir often, and finish with parmesan and a knob of cold butter.",
            "Can I use white wine?",
            "Yes, deglaze with a glass of dry white wine before the stock.",
        ],
        6,
    ),
    (
        "code to back pain",
        [
            "My Python script throws a KeyError when reading the config dict.",
            "Use config.get('key') or check if the key exists before indexing.",
            "It happens inside a loop over JSON records from the API.",
            "Some records may lack the field; validate them with a schema first.",
            "Would pydantic help here?",
            "Yes, a pydantic model gives clear errors for missing fields.",
            "OK I'll refactor the parser with pydantic models.",
            "Unrelated, but I've had lower back pain for a week.",
            "Sorry to hear that. Does it get worse when you sit for long?",
            "Yes, mostly after long days at my desk.",
            "Gentle stretching, walking breaks and a better chair often help; see a doctor if it persists.",
            "Is ibuprofen okay to take?",
            "Short-term ibuprofen is common for back pain, but check with a pharmacist about your health.",
        ],
        7,
    ),
    (
        "garden to loans",
        [
            "My tomato plants have yellow leaves at the bottom.",
            "That's often nitrogen deficiency or overwatering.",
            "I water them every day in the afternoon.",
            "Water deeply in the morning every two or three days instead.",
            "Should I add compost too?",
            "A layer of compost adds nitrogen and keeps the soil moist.",
            "Different question: should I pay off my car loan early or invest?",
            "Compare the loan's interest rate with expected investment returns.",
            "The loan is at 6.5 percent.",
            "At 6.5 percent, paying it off is a guaranteed return that beats many bonds.",
            "What about my emergency fund?",
            "Keep three to six months of expenses saved before extra loan payments.",
        ],
        6,
    ),
    (
        "football to printer",
        [
            "Did you watch the match last night? Liverpool won 3-1.",
            "I did! Salah's second goal was brilliant.",
            "Their midfield pressed so well in the second half.",
            "The substitutions changed the game after sixty minutes.",
            "Do you think they can win the league this season?",
            "If the defence stays fit, they have a real chance at the title.",
            "Now my printer keeps jamming and shows error E3.",
            "E3 usually means a paper feed problem; open the rear tray and remove any scraps.",
            "I removed the paper but it still jams.",
            "Clean the rollers with a damp cloth and use fresh, dry paper.",
            "Should I update the printer driver too?",
            "Yes, install the latest driver from the manufacturer's site.",
        ],
        6,
    ),
    (
        "wedding to car",
        [
            "My sister's wedding is in June and I'm giving the speech.",
            "Congratulations! Do you want help writing the toast?",
            "Yes, I want it funny but also touching, about five minutes.",
            "Start with a childhood story, then say what her partner brings out in her.",
            "Should I mention how they met at university?",
            "Yes, the story of how they met is a lovely way to end the speech with a toast.",
            "Also, my car makes a grinding noise when I brake.",
            "Grinding usually means the brake pads are worn down to the metal.",
            "Is it safe to keep driving it?",
            "Not for long; worn pads damage the discs and reduce braking power.",
            "How much does replacing brake pads cost?",
            "Front pads usually cost between 100 and 250 euros at a garage, fitted.",
        ],
        6,
    ),
]
SINGLE = [
    (
        "one trip",
        [
            "I'm planning a trip to Japan next spring.",
            "Great! Are you thinking Tokyo and Kyoto?",
            "Yes, and maybe Osaka. How long should I stay in Kyoto?",
            "Three days in Kyoto lets you see the temples and Arashiyama.",
            "Should I get a JR rail pass for the trains?",
            "If you travel Tokyo-Kyoto-Osaka by shinkansen the rail pass usually pays off.",
            "What about hotels in Tokyo, which area?",
            "Shinjuku or Shibuya are convenient, with many train lines.",
            "Is April good for cherry blossoms?",
            "Early April is usually peak sakura season in Tokyo and Kyoto.",
            "Do I need cash or do cards work?",
            "Carry some yen in cash; many small shops and temples don't take cards.",
        ],
        None,
    ),
    (
        "one bug",
        [
            "Our web app returns a 502 error after the deploy.",
            "A 502 means the load balancer could not reach the app servers; check their health checks.",
            "The health check path changed to /healthz in this release.",
            "Then update the target group's health check path to /healthz.",
            "I updated it but two instances are still unhealthy.",
            "Look at those instances' logs; the app may fail to start because of a missing environment variable.",
            "You're right, DATABASE_URL is missing on them.",
            "Add DATABASE_URL to the launch template and replace the two instances.",
            "The new instances are healthy now.",
            "Good; add a check to the deploy pipeline so a missing variable fails the build.",
            "How do I make the pipeline check that?",
            "Add a step that compares the required variables with the ones set and exits non-zero on a gap.",
        ],
        None,
    ),
]


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedderProvider:
    provider = LocalEmbedderProvider()
    ok, why = provider.ready()
    assert ok, f"the bundled local embedding model must load: {why}"
    return provider


def services(make_settings: Any, embedder: Any, **topic_shift: Any) -> Services:
    project = parse_project_config(
        {
            "memory": {
                "extraction": {"enabled": ["semantic"]},
                "recall": {"enabled": False},
                "snapshot": {
                    "idle_seconds": 1,
                    "max_messages": 50,
                    "topic_shift": {"enabled": True, **topic_shift},
                },
            }
        }
    )
    return Services(make_settings(project=project), embedder=embedder, queue_factory=local_queue_factory)


@pytest.fixture
def svc(make_settings: Any, embedder: LocalEmbedderProvider) -> Iterator[Services]:
    with helpers.installed(services(make_settings, embedder)) as installed:
        yield installed


@pytest.fixture(scope="module")
def fns() -> dict[str, Any]:
    return {name: load_function(name) for name in ("record_turns", "scan_sessions")}


def record(fns: dict[str, Any], ctx: Any, user: str, session: str, texts: list[str]) -> None:
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(texts)]
    status, body = helpers.call(
        fns["record_turns"],
        ctx,
        "record_turns_post.json",
        {"user_id": user, "turns": turns},
        path=f"/v1/sessions/{session}/turns",
        path_parameters={"session_id": session},
    )
    assert status == 201, body


def scan_when_idle(fns: dict[str, Any], ctx: Any) -> dict[str, Any]:
    time.sleep(1.2)  # idle_seconds: 1
    result: dict[str, Any] = fns["scan_sessions"].lambda_handler(load_event("scan_schedule.json"), ctx)
    return result


def snapshots(svc: Services, user: str, session: str) -> list[Any]:
    from mongomem.models.common import Scope

    return sorted(
        svc.snapshots.of_session(Scope(tenant="default", user_id=user), session), key=lambda s: s.from_seq
    )


@pytest.mark.parametrize(("name", "texts", "change"), SHIFTS, ids=[s[0] for s in SHIFTS])
def test_the_cut_lands_within_one_turn_of_the_topic_change(
    svc: Services, fns: dict[str, Any], ctx: Any, name: str, texts: list[str], change: int
) -> None:
    # Given a conversation whose topic changes at a known turn (seq change + 1), now idle
    user, session = f"u-{uuid.uuid4().hex[:6]}", "chat"
    record(fns, ctx, user, session, texts)
    # When the scan promotes it
    report = scan_when_idle(fns, ctx)
    # Then the first snapshot ends within one turn of the change, cut for the topic, and the second
    # (the new topic) runs to the end: every turn in exactly one snapshot
    first, second = snapshots(svc, user, session)
    assert abs(first.to_seq - change) <= 1, (name, first.to_seq, change)
    assert (first.from_seq, first.reason) == (1, "topic_shift")
    assert (second.from_seq, second.to_seq, second.reason) == (first.to_seq + 1, len(texts), "idle")
    assert report["reasons"] == {"topic_shift": 1, "idle": 1}
    # and each snapshot is queued for extraction on its own
    queued = [json.loads(d["body"])["snapshot_id"] for d in svc.db["local_queue"].find()]
    assert sorted(queued) == sorted([first.snapshot_id, second.snapshot_id])


@pytest.mark.parametrize(("name", "texts", "change"), SINGLE, ids=[s[0] for s in SINGLE])
def test_a_conversation_on_one_topic_stays_one_snapshot(
    svc: Services, fns: dict[str, Any], ctx: Any, name: str, texts: list[str], change: None
) -> None:
    user = f"u-{uuid.uuid4().hex[:6]}"
    record(fns, ctx, user, "chat", texts)
    scan_when_idle(fns, ctx)
    (only,) = snapshots(svc, user, "chat")
    assert (only.from_seq, only.to_seq, only.reason) == (1, len(texts), "idle")


def test_two_sessions_with_several_changes_are_cut_at_each(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    # Given one session going through three topics
    (_, travel, at_a), (_, code, _), (_, garden, _) = SHIFTS[0], SHIFTS[1], SHIFTS[2]
    texts = travel[:at_a] + code[:7] + garden[:6]
    user = f"u-{uuid.uuid4().hex[:6]}"
    record(fns, ctx, user, "long", texts)
    scan_when_idle(fns, ctx)
    cuts = [(s.from_seq, s.to_seq) for s in snapshots(svc, user, "long")]
    # Then one snapshot per topic, each within one turn of where it changed
    assert len(cuts) == 3
    assert abs(cuts[0][1] - at_a) <= 1 and abs(cuts[1][1] - (at_a + 7)) <= 1 and cuts[2][1] == len(texts)


def test_when_off_or_on_a_manual_flush_a_session_is_one_snapshot(
    make_settings: Any, embedder: LocalEmbedderProvider, fns: dict[str, Any], ctx: Any
) -> None:
    _, texts, _ = SHIFTS[0]
    project = parse_project_config(
        {"memory": {"recall": {"enabled": False}, "snapshot": {"idle_seconds": 1}}}
    )
    with helpers.installed(
        Services(make_settings(project=project), embedder=embedder, queue_factory=local_queue_factory)
    ) as off:
        record(fns, ctx, "ana", "chat", texts)
        scan_when_idle(fns, ctx)
        assert [(s.from_seq, s.to_seq) for s in snapshots(off, "ana", "chat")] == [(1, len(texts))]
    with helpers.installed(services(make_settings, embedder)) as on:
        from mongomem.models.common import Scope

        record(fns, ctx, "bo", "chat", texts)
        cut = on.promoter.flush(Scope(tenant="default", user_id="bo"), "chat")
        assert [(s.from_seq, s.to_seq, s.reason) for s in cut] == [(1, len(texts), "manual")]


def test_an_embedder_that_fails_never_stops_promotion(
    make_settings: Any, fns: dict[str, Any], ctx: Any
) -> None:
    from mongomem.ports import EmbeddingError, EmbeddingProvider

    class Broken(EmbeddingProvider):
        dim = 8
        model = "broken"

        def embed(self, texts: list[str], purpose: str = "document") -> list[list[float]]:
            raise EmbeddingError("the provider is down")

        def ready(self) -> tuple[bool, str]:
            return True, "ok"  # it fails when it embeds

    _, texts, _ = SHIFTS[0]
    with helpers.installed(services(make_settings, Broken())) as svc:
        record(fns, ctx, "ana", "chat", texts)
        scan_when_idle(fns, ctx)
        assert [(s.from_seq, s.to_seq, s.reason) for s in snapshots(svc, "ana", "chat")] == [
            (1, len(texts), "idle")
        ]
