"""Benchmark: paraphrase duplicates. Every fact is said three times in other words, in three snapshots.

A generated set of facts (at least 200: home city, hometown, employer, job title, three favourites, diet,
birthday, partner's name, home airport, car, two languages, an allergy, a pet's name and a liked activity
per user) is recorded through the real record logic, one snapshot per restatement round (each round in its
own session, promoted at once), and extracted by the real extract handler (SQS event in) on the
MongoDB-compatible server with the embedded vector index and the bundled local e5 embedder, two ways:

1. the offline rules, end to end from the user's own words: each fact is phrased three different ways
   ("I live in Porto." / "Porto is where I live these days." / "My home is in Porto now.");
2. an LLM whose answers vary the way real models vary: a deterministic scripted provider (the LLMProvider
   port) reads each snapshot's transcript and answers the same facts under other attribute labels and
   value wordings each round ("favorite color" / "favourite colour" / "preferred colour", "the user's
   home city" / "city of residence", articles, case, British/American spelling, cardinality left out).
   Asked to reconcile an ambiguous match, it always answers ADD: only mongomem's own rules may merge.

Each turn states one fact, so a memory's evidence (snapshot, seq) says which facts it holds. Printed:
`duplicate_rate` (active memories beyond one per fact / facts; offline rules), `duplicate_rate_llm`,
`reinforced_share` / `reinforced_share_llm` (restatements that ended as REINFORCE / restatements),
`wrong_merges` / `wrong_merges_llm` (memories or lineages holding two different facts: must be 0),
`missed_facts` (facts with no active memory), `updates` (a restatement taken for a changed value), the
decisions of every restatement, the facts and restatements counted, and the time per snapshot. Counts are
deterministic (seeded); only the time varies.

    python bench/dedup.py [--users 14] [--seed 7] [--embedder local|hashing] [--path both|rules|llm]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from harness import emit, log, machine, quiet

from mongomem.ports import ANSWERS

ROUNDS = 3  # the first statement and two restatements


@dataclass(frozen=True)
class Family:
    """One attribute family: how a user says it (three or more phrasings) and how LLMs label it."""

    name: str
    values: list[str]
    phrasings: list[
        str
    ]  # {v}: the value, {V}: capitalised, {a}: "a"/"an" + value, {x}: the value's other form
    labels: list[str]  # attribute labels an LLM gives it
    many: bool = False  # several values at once (each its own fact)
    per_user: int = 1
    forms: dict[str, str] = field(default_factory=dict)  # value -> its other form (singular, plural ...)
    value_variants: tuple[str, ...] = ("same",)  # how an LLM words the value (see VARIANTS)


def _article(word: str) -> str:
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word


PHRASE_FAMILIES: list[Family] = [
    Family(
        "home city",
        "Porto Lisbon Madrid Berlin Vienna Oslo Dublin Prague Krakow Seville Lyon Milan Ghent Bergen".split(),
        [
            "I live in {v}.",
            "{v} is where I live these days.",
            "My home is in {v} now.",
            "I'm based in {v}.",
            "These days I live in {v}.",
            "I currently live in {v}.",
        ],
        [
            "home city",
            "city of residence",
            "the user's home city",
            "Home City",
            "current city",
            "residence city",
        ],
    ),
    Family(
        "hometown",
        "Coimbra Braga Faro Bilbao Munich Graz Cork Brno Gdansk Malaga Nantes Verona Bruges Aarhus".split(),
        [
            "I'm originally from {v}.",
            "I grew up in {v}.",
            "My hometown is {v}.",
            "{v} is my hometown.",
            "I come from {v}.",
        ],
        ["hometown", "home town", "city of origin", "the user's hometown", "Hometown", "place of origin"],
    ),
    Family(
        "employer",
        [
            "Acme Corp",
            "Globex",
            "Initech",
            "Northwind Traders",
            "Contoso",
            "Umbrella Health",
            "Stark Industries",
            "Wayne Enterprises",
            "Hooli",
            "Vandelay Industries",
            "Soylent Labs",
            "Cyberdyne Systems",
            "Wonka Industries",
            "Tyrell Corporation",
        ],
        [
            "I work at {v}.",
            "My employer is {v}.",
            "{v} is the company I work for.",
            "I'm employed by {v}.",
            "I work for {v}.",
        ],
        [
            "employer",
            "company",
            "workplace",
            "the user's employer",
            "current employer",
            "Employer",
            "works at",
        ],
        value_variants=("same", "dot", "same"),
    ),
    Family(
        "occupation",
        [
            "nurse",
            "teacher",
            "software engineer",
            "architect",
            "data analyst",
            "pharmacist",
            "electrician",
            "graphic designer",
            "accountant",
            "physiotherapist",
            "journalist",
            "civil engineer",
            "chef",
            "librarian",
        ],
        [
            "I'm {a}.",
            "I work as {a}.",
            "My job title is {v}.",
            "By profession I'm {a}.",
            "My job is {v}.",
        ],
        ["occupation", "job title", "profession", "job", "Occupation", "the user's job title"],
        value_variants=("same", "article", "cap"),
    ),
    Family(
        "favourite colour",
        "green blue red purple orange yellow teal grey".split(),
        [
            "My favourite colour is {v}.",
            "{V} is my favourite colour.",
            "My favorite color is {v}.",
            "The colour I like most is {v}.",
        ],
        [
            "favourite colour",
            "favorite color",
            "preferred colour",
            "Favorite Colour",
            "the user's favourite colour",
            "favourite color",
        ],
        value_variants=("same", "cap", "the colour"),
    ),
    Family(
        "favourite food",
        "sushi ramen lasagne tacos paella curry pho risotto falafel dumplings pizza".split(),
        [
            "My favourite food is {v}.",
            "{V} is my favourite food.",
            "My favorite food is {v}.",
            "The food I like most is {v}.",
        ],
        ["favourite food", "favorite food", "preferred food", "Favourite Food", "the user's favorite food"],
    ),
    Family(
        "favourite sport",
        "tennis football basketball swimming rugby volleyball golf cricket badminton handball".split(),
        [
            "My favourite sport is {v}.",
            "{V} is my favourite sport.",
            "My favorite sport is {v}.",
            "The sport I like most is {v}.",
        ],
        [
            "favourite sport",
            "favorite sport",
            "preferred sport",
            "the user's favourite sport",
            "Favorite Sport",
        ],
    ),
    Family(
        "diet",
        "vegetarian vegan pescatarian gluten-free".split(),
        [
            "I'm {v}.",
            "I follow {a} diet.",
            "My diet is {v}.",
            "I eat {a} diet.",
            "I've been {v} for years.",
        ],
        ["diet", "dietary preference", "Diet", "the user's diet", "diet type", "dietary choice"],
        value_variants=("same", "cap", "diet"),
    ),
    Family(
        "birthday",
        [],  # generated: a month and a day
        [
            "My birthday is on {v}.",
            "My birthday is {x}.",
            "My birthday falls on {v}.",
            "I celebrate my birthday on {v}.",
        ],
        ["birthday", "Birthday", "the user's birthday", "birth day"],
        value_variants=("same", "day first", "ordinal"),
    ),
    Family(
        "partner",
        "Maria Joana Sofia Tom Daniel Lucas Emma Clara Rui Marta Pedro Ines Hugo Nina".split(),
        [
            "My {r} is called {v}.",
            "{v} is my {r}.",
            "My {r}'s name is {v}.",
            "My {r} is named {v}.",
        ],
        ["{r}'s name", "{r} name", "name of {r}", "the user's {r}'s name", "{R}'s Name", "{r}"],
    ),
    Family(
        "home airport",
        "LIS OPO MAD BER VIE OSL DUB PRG KRK SVQ LYS MXP BRU BGO".split(),
        [
            "My home airport is {v}.",
            "I usually fly out of {v}.",
            "{v} is my home airport.",
            "I normally fly from {v}.",
        ],
        ["home airport", "Home Airport", "usual airport", "the user's home airport", "local airport"],
    ),
    Family(
        "car",
        [
            "Toyota Corolla",
            "Volkswagen Golf",
            "Tesla Model 3",
            "Honda Civic",
            "Ford Focus",
            "Renault Clio",
            "Skoda Octavia",
            "Fiat Panda",
            "Volvo XC40",
            "Kia Niro",
        ],
        ["I drive {a}.", "My car is {a}.", "I own {a}.", "These days I drive {a}."],
        ["car", "vehicle", "the user's car", "Car", "car model"],
        value_variants=("same", "article", "same"),
    ),
    Family(
        "languages",
        "Spanish French German Italian Portuguese Dutch Polish Japanese Mandarin Swedish Greek Turkish".split(),
        [
            "I speak {v}.",
            "I'm fluent in {v}.",
            "{v} is one of the languages I speak.",
            "I can speak {v}.",
            "I also speak {v}.",
        ],
        ["languages", "languages spoken", "spoken languages", "language", "Languages Spoken", "speaks"],
        many=True,
        per_user=2,
        value_variants=("same", "lower", "language"),
    ),
    Family(
        "allergy",
        "peanuts shellfish penicillin pollen eggs sesame latex walnuts".split(),
        [
            "I'm allergic to {v}.",
            "I have {x} allergy.",
            "I have an allergy to {v}.",
            "I'm severely allergic to {v}.",
        ],
        ["allergy", "allergies", "Allergies", "allergic to", "the user's allergies", "food allergy"],
        many=True,
        forms={
            "peanuts": "a peanut",
            "shellfish": "a shellfish",
            "penicillin": "a penicillin",
            "pollen": "a pollen",
            "eggs": "an egg",
            "sesame": "a sesame",
            "latex": "a latex",
            "walnuts": "a walnut",
        },
        value_variants=("same", "cap", "singular"),
    ),
    Family(
        "pet",
        "Max Luna Bella Rocky Milo Coco Simba Nala Oscar Teddy Pepper Biscuit".split(),
        [
            "I have a {k} called {v}.",
            "My {k}'s name is {v}.",
            "{v} is my {k}.",
            "My {k} is called {v}.",
            "We adopted a {k} named {v}.",
        ],
        ["pets", "pet", "pet's name", "pet name", "the user's pets", "Pets", "{k}'s name"],
        many=True,
    ),
    Family(
        "likes",
        "hiking cycling chess pottery sailing gardening photography baking climbing knitting".split(),
        [
            "I love {v}.",
            "I really enjoy {v}.",
            "{V} is something I love.",
            "I'm really into {v}.",
            "I'm a big fan of {v}.",
        ],
        ["likes", "interests", "hobbies", "enjoys", "hobby", "Likes", "the user's interests"],
        many=True,
    ),
]
MONTHS = "January February March April May June July August September October November December".split()
RELATIONS = ["wife", "husband", "partner"]
PET_KINDS = ["dog", "cat"]


def _ordinal(day: int) -> str:
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


@dataclass
class Fact:
    fid: int
    user: str
    family: Family
    value: str
    extra: dict[str, str]  # relation, pet kind, birthday parts
    phrasings: list[str]  # the sentence of each round
    labels: list[str]  # the attribute label an LLM gives it each round
    variants: list[str]  # how an LLM words the value each round
    subjects: list[str]
    cardinality: list[str | None]

    def sentence(self, round_no: int) -> str:
        return self.phrasings[round_no]


def _fill(template: str, fact_value: str, extra: dict[str, str], other: str) -> str:
    return template.format(
        v=fact_value,
        V=fact_value[:1].upper() + fact_value[1:],
        a=_article(fact_value),
        x=other,
        r=extra.get("relation", ""),
        R=extra.get("relation", "").capitalize(),
        k=extra.get("kind", ""),
    )


def generate(users: int, seed: int) -> list[Fact]:
    """The facts of `users` users: one per family (two languages), each with three phrasings."""
    rng = random.Random(seed)
    facts: list[Fact] = []
    for u in range(users):
        user = f"user-{u:02d}"
        for family in PHRASE_FAMILIES:
            if family.name == "birthday":
                month, day = rng.randrange(12), rng.randint(1, 28)
                picks = [f"{MONTHS[month]} {day}"]
            else:
                picks = rng.sample(family.values, family.per_user)
            for value in picks:
                extra: dict[str, str] = {}
                other = family.forms.get(value, value)
                if family.name == "birthday":
                    month_name, day_text = value.split()
                    extra = {"month": month_name, "day": day_text}
                    other = f"the {_ordinal(int(day_text))} of {month_name}"
                if family.name == "partner":
                    extra["relation"] = rng.choice(RELATIONS)
                if family.name == "pet":
                    extra["kind"] = rng.choice(PET_KINDS)
                phrasings = [_fill(t, value, extra, other) for t in rng.sample(family.phrasings, ROUNDS)]
                labels = [_fill(t, value, extra, other) for t in rng.sample(family.labels, ROUNDS)]
                variants = [rng.choice(family.value_variants) for _ in range(ROUNDS)]
                variants[0] = "same"
                subjects = [rng.choice(["user", "User", "the user"]) for _ in range(ROUNDS)]
                stated = "many" if family.many else "one"
                cardinality = [rng.choice([stated, None]) for _ in range(ROUNDS)]
                facts.append(
                    Fact(
                        len(facts),
                        user,
                        family,
                        value,
                        extra,
                        phrasings,
                        labels,
                        variants,
                        subjects,
                        cardinality,
                    )
                )
    return facts


def _variant(fact: Fact, how: str) -> str:
    """The fact's value as an LLM may word it (same meaning)."""
    v = fact.value
    if how == "lower":
        return v.lower()
    if how == "cap":
        return v[:1].upper() + v[1:]
    if how == "dot":
        return f"{v}."
    if how == "article":
        return _article(v)
    if how == "the colour":
        return f"the colour {v}"
    if how == "diet":
        return f"{_article(v)} diet"
    if how == "language":
        return f"{v} language"
    if how == "singular":
        return fact.family.forms.get(v, v).split(" ", 1)[-1]
    if how == "day first":
        return f"{fact.extra['day']} {fact.extra['month']}"
    if how == "ordinal":
        return f"{fact.extra['month']} {_ordinal(int(fact.extra['day']))}"
    return v


class VaryingLLM:
    """A deterministic LLM (the LLMProvider port): it reads the transcript of the request and answers the
    facts it recognises, worded for the round the turn belongs to. Reconciliation questions get ADD."""

    name = "varying-scripted"
    capabilities = ANSWERS

    def __init__(self, by_content: dict[str, tuple[Fact, int]]) -> None:
        self.by_content = by_content
        self.calls: Counter[str] = Counter()

    def ready(self) -> tuple[bool, str]:
        return True, ""

    def complete_json(self, request: Any) -> Any:
        from mongomem.ports import LLMResult

        self.calls[request.task] += 1
        if request.task == "reconcile":
            answer = {"decision": "ADD", "target_id": None, "reason": "not sure they are the same"}
            return LLMResult(text=json.dumps(answer), model=self.name)
        items = []
        for line in (request.shared or "").splitlines():
            # the transcript: one JSON object per turn (extraction/prompts.py)
            if not line.startswith("{"):
                continue
            turn = json.loads(line)
            seq_text, content = str(turn.get("seq")), str(turn.get("content") or "")
            known = self.by_content.get(content)
            if known is None:
                continue
            fact, round_no = known
            item: dict[str, Any] = {
                "subject": fact.subjects[round_no],
                "attribute": fact.labels[round_no],
                "value": _variant(fact, fact.variants[round_no]),
                "evidence_seqs": [int(seq_text)],
            }
            if fact.cardinality[round_no]:
                item["cardinality"] = fact.cardinality[round_no]
            items.append(item)
        return LLMResult(text=json.dumps({"items": items}), model=self.name)


@dataclass
class Run:
    facts: list[Fact]
    turn_of: dict[tuple[str, int], tuple[int, int]]  # (snapshot, seq) -> (fact id, round)
    snapshots: list[str]
    times: list[float]
    docs: list[dict[str, Any]]
    llm_calls: dict[str, int]


def run_path(path: str, facts: list[Fact], server: Any, tmp: Path, embedder: Any) -> Run:
    from mongomem.config import parse_project_config, settings_from_env
    from mongomem.local.queue import local_queue_factory
    from mongomem.models.common import Scope
    from mongomem.models.turns import RecordTurnsRequest
    from mongomem.offline.llm_offline import OfflineLLM
    from mongomem.runtime import Services, configure
    from mongomem.vectors.embedded import EmbeddedIndex
    from tests.conftest import Ctx, load_event, load_function

    by_content: dict[str, tuple[Fact, int]] = {f.sentence(r): (f, r) for f in facts for r in range(ROUNDS)}
    llm: Any = OfflineLLM() if path == "rules" else VaryingLLM(by_content)
    cfg = parse_project_config({"memory": {"extraction": {"enabled": ["semantic"]}}})
    settings = settings_from_env(
        {"MONGOMEM_MONGODB_URI": server.uri, "MONGOMEM_DB_NAME": f"dedup_{uuid.uuid4().hex[:8]}"},
        project=cfg,
        enabled_extractions=["semantic"],
    )
    svc = Services(
        settings,
        llm=llm,
        embedder=embedder,
        vector_index=EmbeddedIndex(tmp / f"vectors-{path}"),
        queue_factory=local_queue_factory,
    )
    configure(svc)
    fn = load_function("extract")
    ctx = Ctx()
    template = load_event("extract_sqs.json")["Records"][0]
    rng = random.Random(11)
    users = sorted({f.user for f in facts})
    turn_of: dict[tuple[str, int], tuple[int, int]] = {}
    snapshots: list[str] = []
    times: list[float] = []
    start = datetime(2026, 6, 1, 9, tzinfo=UTC)
    try:
        for round_no in range(ROUNDS):  # every user's round 1, then every round 2 ...: days apart
            for u, user in enumerate(users):
                scope = Scope(tenant="default", user_id=user)
                mine = [f for f in facts if f.user == user]
                rng.shuffle(mine)
                when = start + timedelta(days=7 * round_no, minutes=u)
                turns: list[dict[str, Any]] = []
                for i, f in enumerate(mine):
                    at = when + timedelta(seconds=20 * i)
                    turns.append(
                        {"role": "user", "content": f.sentence(round_no), "timestamp": at.isoformat()}
                    )
                    ack = {
                        "role": "assistant",
                        "content": "Noted.",
                        "timestamp": (at + timedelta(seconds=5)).isoformat(),
                    }
                    turns.append(ack)
                session = f"{user}-round-{round_no + 1}"
                recorded = svc.recorder.record(
                    scope, session, RecordTurnsRequest.model_validate({"turns": turns})
                )
                snap = svc.promoter.flush(scope, session)[0].snapshot_id
                snapshots.append(snap)
                for f, turn in zip(mine, recorded.turns[::2], strict=True):
                    turn_of[(snap, turn.seq)] = (f.fid, round_no)
                body = {"snapshot_id": snap, "type": "semantic", "tenant": "default", "user_id": user}
                event = {"Records": [dict(template, body=json.dumps(body))]}
                started = time.perf_counter()
                with quiet():
                    response = fn.lambda_handler(event, ctx)
                times.append(time.perf_counter() - started)
                assert response == {"batchItemFailures": []}, response
        docs = list(svc.memory_store.coll.find({"type": "semantic"}))
    finally:
        configure(None)
        svc.db.client.drop_database(svc.db.name)
    calls = dict(llm.calls) if isinstance(llm, VaryingLLM) else {}
    return Run(facts, turn_of, snapshots, times, docs, calls)


def score(run: Run) -> dict[str, Any]:
    """Duplicates, wrong merges, missed facts and each restatement's decision, from the stored memories."""
    facts_of: dict[str, set[int]] = {}
    cited: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for doc in run.docs:
        held: set[int] = set()
        for ev in doc.get("evidence") or []:
            for seq in ev.get("seqs") or []:
                key = (ev.get("snapshot_id"), seq)
                if key in run.turn_of:
                    held.add(run.turn_of[key][0])
                    cited[key].append(doc)
        facts_of[doc["_id"]] = held
    active = [d for d in run.docs if d.get("status") == "active"]
    # two different facts in one memory (a wrong REINFORCE) or one lineage (a wrong UPDATE)
    lineage_facts: dict[str, set[int]] = defaultdict(set)
    for doc in run.docs:
        lineage_facts[doc["lineage_id"]] |= facts_of[doc["_id"]]
    wrong = [lin for lin, held in lineage_facts.items() if len(held) > 1]
    per_fact: Counter[int] = Counter()
    for doc in active:
        for fid in facts_of[doc["_id"]]:
            per_fact[fid] += 1
    duplicates = sum(max(0, n - 1) for n in per_fact.values())
    missed = [f for f in run.facts if per_fact[f.fid] == 0]
    outcomes: Counter[str] = Counter()
    by_family: dict[str, Counter[str]] = defaultdict(Counter)
    for (snap, _seq), (fid, round_no) in run.turn_of.items():
        if round_no == 0:
            continue
        decision = "none"
        for doc in cited[(snap, _seq)]:
            mine = [d["decision"] for d in doc.get("decisions") or [] if d.get("snapshot_id") == snap]
            if mine:
                decision = mine[-1]
                break
        outcomes[decision] += 1
        if decision != "REINFORCE":
            by_family[run.facts[fid].family.name][decision] += 1
    restatements = sum(outcomes.values())
    return {
        "duplicate_rate": round(duplicates / len(run.facts), 4),
        "reinforced_share": round(outcomes["REINFORCE"] / restatements, 4) if restatements else 0.0,
        "wrong_merges": len(wrong),
        "duplicates": duplicates,
        "missed_facts": len(missed),
        "active_memories": len(active),
        "unattributed_memories": sum(1 for d in active if not facts_of[d["_id"]]),
        "updates": outcomes["UPDATE"],
        "restatement_decisions": dict(outcomes),
        "not_reinforced_by_family": {k: dict(v) for k, v in sorted(by_family.items())},
        "missed_by_family": dict(Counter(f.family.name for f in missed)),
        "wrong_merge_examples": [sorted(run.facts[i].value for i in lineage_facts[lin]) for lin in wrong[:5]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--users", type=int, default=14, help="users; 17 facts each")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--embedder", choices=["local", "hashing"], default="local")
    parser.add_argument("--path", choices=["both", "rules", "llm"], default="both")
    args = parser.parse_args()

    from mongomem.local.mongod import EmbeddedMongo

    embedder: Any
    if args.embedder == "local":
        from mongomem.providers.embed_local import LocalEmbedderProvider

        embedder = LocalEmbedderProvider()
        ok, why = embedder.ready()
        if not ok:
            raise SystemExit(f"the bundled local embedding model did not load: {why}")
    else:
        from mongomem.offline.embed_hashing import HashingEmbedder

        embedder = HashingEmbedder(dim=384)
    facts = generate(args.users, args.seed)
    paths = ["rules", "llm"] if args.path == "both" else [args.path]
    result: dict[str, Any] = {
        "facts": len(facts),
        "restatements": len(facts) * (ROUNDS - 1),
        "users": args.users,
        "families": len(PHRASE_FAMILIES),
        "embedder": embedder.model,
    }
    scored: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmpdir, EmbeddedMongo(Path(tmpdir) / "mongo") as server:
        embedder.embed(["warm up the model"], "document")
        for path in paths:
            started = time.perf_counter()
            run = run_path(path, facts, server, Path(tmpdir), embedder)
            scored[path] = score(run)
            scored[path]["median_ms_per_snapshot"] = round(statistics.median(run.times) * 1000, 1)
            scored[path]["snapshots"] = len(run.snapshots)
            if run.llm_calls:
                scored[path]["llm_calls"] = run.llm_calls
            log(f"{path}: {json.dumps(scored[path])} ({time.perf_counter() - started:.0f} s)")
    for path, figures in scored.items():
        suffix = "" if path == "rules" else "_llm"
        for key in ("duplicate_rate", "reinforced_share", "wrong_merges", "missed_facts", "updates"):
            result[f"{key}{suffix}"] = figures[key]
        result[f"details{suffix}"] = {
            k: v
            for k, v in figures.items()
            if k not in {"duplicate_rate", "reinforced_share", "wrong_merges"}
        }
    result["goal_duplicate_rate"] = 0.02
    result["machine"] = machine()
    emit(result)


if __name__ == "__main__":
    main()
