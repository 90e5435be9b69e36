"""The matching rule of bench/extraction_quality.py: does a stored memory state what a source says?

Deterministic (no LLM judge), written down in docs/benchmarks.md "Extraction quality" and checked by hand
on bench/data/extraction_handcheck.jsonl (tests/unit/test_extraction_match.py replays its verdicts).

- Words: lower-cased, possessives and light suffixes (-s, -es, -ies, -ing, -ed, a final -e, a doubled
  final consonant) stripped, a few irregular verbs mapped; stop words and chat fillers dropped. The
  speakers' names and `user` are not content words (who a statement is about is the person check).
- Anchors: numbers and proper nouns (a capitalised word not opening its sentence, or any word of capitals
  like LGBTQ) of the memory's statement; every one must occur in the source (a number word counts as
  its digits).
- A memory *states* a source when the anchors agree and they share at least 2 content words covering
  half of the shorter of the two (`min_shared` 1 for a memory of at most 2 content words, all of them
  in the source: "Melanie hobby: painting").
- The person: a semantic or preference memory is about its subject (`user` and speaker A's name are
  speaker A; a possessive "Melanie's kids" is Melanie), an episode about its participants or, naming
  none, the speakers its title and summary name (else speaker A, whose memory it is). An org item
  (taxonomic, procedural) and a fact about someone else (a shop, a city) claim no speaker. A source is
  about its speaker (an observation's key, a turn's speaker) or, for a summary sentence, the speakers it
  names.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

STOP = frozenset(
    """
a about above after again against all also am an and any are aren't as at be because been before being
below between both but by can could did do does doing done don't down during each else even ever every few
for from further get gets getting got had has have having he her here hers herself him himself his how i
i'm i've i'd i'll if in into is isn't it it's its itself just let lets me more most much must my myself no
nor not now of off on once only or other our ours ourselves out over own really same she should so some
such than that that's the their theirs them themselves then there these they they're this those through
to too under until up upon us very was wasn't we we're we've were what when where which while who whom
why will with would yes yet you you're you've your yours yourself yourselves
oh hey hi hello wow yeah yep ok okay cool awesome great thanks thank lol haha gonna wanna kinda sort
like lot lots thing things stuff something anything everything someone anyone everyone one ones
way ways time times day days today recently currently still always often really actually definitely
user users person people new good nice amazing
say says saying tell tells telling mention mentions mentioned around ago last next since soon later week weeks
unknown none unspecified specified n/a go goes going went gone month months year years yesterday tomorrow tonight likes love loves loved enjoy enjoys enjoyed prefer prefers
""".split()
)
IRREGULAR = {
    "went": "go",
    "gone": "go",
    "going": "go",
    "goes": "go",
    "ran": "run",
    "saw": "see",
    "seen": "see",
    "made": "make",
    "took": "take",
    "taken": "take",
    "bought": "buy",
    "met": "meet",
    "felt": "feel",
    "feels": "feel",
    "children": "child",
    "kids": "kid",
    "wrote": "write",
    "written": "write",
    "began": "begin",
    "begun": "begin",
    "gave": "give",
    "given": "give",
    "found": "find",
    "thought": "think",
    "taught": "teach",
    "brought": "bring",
    "built": "build",
    "drew": "draw",
    "drawn": "draw",
    "painting": "paint",
    "paintings": "paint",
    "lost": "lose",
    "left": "leave",
    "told": "tell",
    "said": "say",
    "kept": "keep",
    "sang": "sing",
    "sung": "sing",
    "swam": "swim",
    "won": "win",
    "ate": "eat",
    "eaten": "eat",
    "flew": "fly",
    "flown": "fly",
    "moms": "mom",
    "mother": "mom",
    "father": "dad",
    "husband": "husband",
    "wife": "wife",
}
NUMBER_WORDS = {
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "twenty": "20",
    "fifty": "50",
    "hundred": "100",
}
# Not anchors though capitalised mid-sentence: calendar words, pronoun I, and labels our own texts use.
NOT_ANCHORS = frozenset(
    """
i january february march april may june july august september october november december monday tuesday
wednesday thursday friday saturday sunday user steps step expect mon tue tues wed thu thur thurs fri sat sun
jan feb mar apr jun jul aug sep sept oct nov dec
""".split()
)
RSQUO = "\u2019"  # the typographic apostrophe, read as '
# Dates are left out: a resolved date ("2023-05-07" for "yesterday") is checked by no word of a turn.
DATE = re.compile(r"\b(?:1[89]|20)\d\d(?:-\d\d(?:-\d\d(?:[T ][0-9:.]+Z?)?)?)?\b")
WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019&-]*[A-Za-z]|[A-Za-z]|\d+(?:[.,]\d+)*")
SENTENCE = re.compile(r"(?<=[.!?:;])\s+|\n+")
FIRST_PERSON = frozenset("i me my mine myself we us our ours ourselves you your yours yourself".split())
ORG_KINDS = frozenset({"taxonomic", "procedural"})


def stem(word: str) -> str:
    w = word.lower().replace(RSQUO, "'")
    if w.endswith("'s"):
        w = w[:-2]
    w = w.strip("'-")
    if w in IRREGULAR:
        return IRREGULAR[w]
    if w in NUMBER_WORDS:
        return NUMBER_WORDS[w]
    if w.isdigit() or len(w) <= 3:
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]
    return w


STOP_STEMS = frozenset(stem(w) for w in STOP)


CONTRACTION = re.compile(r"\b(won|can|ca)\s?['\u2019]t\b|n['\u2019]t\b", re.IGNORECASE)


def tokens(text: str) -> list[str]:
    """The words of a text, a contraction's "not" spelled out ("won't" and "won 't" -> "will not")."""
    spelled = CONTRACTION.sub(
        lambda m: {"won": "will not", "can": "can not", "ca": "can not"}.get(
            (m.group(1) or "").lower(), " not"
        ),
        text,
    )
    return [t for t in WORD.findall(spelled) if len(t) > 1 or t.isdigit()]


@dataclass(frozen=True)
class Words:
    """A text's content words (stemmed) and anchors (numbers and proper nouns, lower-cased stems)."""

    content: frozenset[str]
    anchors: frozenset[str]
    every: frozenset[str]  # every word's stem, stop words included (where anchors are looked up)
    pairs: frozenset[frozenset[str]] = frozenset()  # content words next to each other (stop words between)


def words(text: str, names: frozenset[str] = frozenset()) -> Words:
    content: set[str] = set()
    anchors: set[str] = set()
    every: set[str] = set()
    sequence: list[str] = []
    for sentence in SENTENCE.split(DATE.sub(" ", text)):
        for i, tok in enumerate(tokens(sentence)):
            low = tok.lower().replace(RSQUO, "'")
            s = stem(tok)
            every.add(s)
            every.add(low)
            if s in names or low in names or low.removesuffix("'s") in names:
                continue
            is_number = tok[0].isdigit() or low in NUMBER_WORDS
            capital = tok[0].isupper() and (i > 0 or (len(tok) > 1 and tok.isupper()))
            if (is_number or capital) and low not in STOP and low not in NOT_ANCHORS and s not in NOT_ANCHORS:
                anchors.add(s)
            if low in STOP or s in STOP_STEMS or (low in NOT_ANCHORS and not is_number):
                continue
            content.add(s)
            sequence.append(s)
        sequence.append("")  # no pair across sentences
    pairs = frozenset(frozenset(p) for p in itertools.pairwise(sequence) if all(p) and p[0] != p[1])
    return Words(frozenset(content), frozenset(anchors), frozenset(every), pairs)


@dataclass(frozen=True)
class Overlap:
    shared: int
    anchors_ok: bool
    missing_anchors: tuple[str, ...]
    cover: float  # shared / the shorter side's content words
    head_ok: bool = True  # two thirds of the head's content words are in the source, two side by side
    head_all: bool = False  # the head has content words and all of them are in the source

    def states(self, memory_words: int, loose: bool) -> bool:
        """The rule: anchors agree, the head is in the source, and enough content words are shared; or,
        `loose` (precision), a short memory (at most 3 content words) whose whole head is in the source."""
        if not self.anchors_ok or not self.head_ok or self.shared == 0:
            return False
        if self.shared >= 2 and self.cover >= 0.5:
            return True
        return loose and memory_words <= 3 and self.head_all


def anchor_in(anchor: str, said: frozenset[str]) -> bool:
    """An anchor is said as itself or as the start of a longer word of 4 letters or more (LGBT, LGBTQ)."""
    return anchor in said or (len(anchor) >= 4 and any(w.startswith(anchor) for w in said))


def overlap(
    memory: Words, source: Words, head: frozenset[str] = frozenset(), own: Words | None = None
) -> Overlap:
    """`source`: the words a source offers (a turn's with its previous turn's); `own`: the source's own
    words, where the head must be (the previous turn may ask, the turn must say it)."""
    shared = len(memory.content & source.content)
    missing = tuple(sorted(a for a in memory.anchors if not anchor_in(a, source.every)))
    shorter = min(len(memory.content), len(source.content)) or 1
    said = own or source
    found = len(head & said.content)
    # a head of three words or more keeps two of them side by side ("support group" is not "group ... support")
    together = len(head) < 3 or any(p <= head for p in said.pairs)
    head_ok = found * 3 >= len(head) * 2 and together
    return Overlap(
        shared,
        not missing,
        missing,
        shared / shorter,
        head_ok,
        bool(head) and found == len(head) and together,
    )


# -- memories and their person ---------------------------------------------------------------------------
@dataclass
class Memory:
    kind: str
    payload: dict[str, Any]
    text: str
    org: bool = False
    session: int | None = None
    seqs: list[int] = field(default_factory=list)

    def statement(self) -> str:
        """What the memory says, without the bookkeeping fields (dates, strengths, tags)."""
        p = self.payload
        if self.kind == "semantic":
            subject = "" if str(p.get("subject", "")).lower() == "user" else str(p.get("subject", ""))
            quals = [str(v) for k, v in (p.get("qualifiers") or {}).items() if k != "name"]
            return ". ".join(
                x
                for x in (f"{subject} {p.get('attribute', '')}".strip(), str(p.get("value", "")), *quals)
                if x
            )
        if self.kind == "preference":
            return f"{p.get('category', '')}. {p.get('preference', '')}"
        if self.kind == "episodic":
            return ". ".join(
                x
                for x in (str(p.get("title", "")), str(p.get("summary", "")), str(p.get("place") or ""))
                if x
            )
        if self.kind == "taxonomic":
            return f"{p.get('term', '')}. {p.get('definition', '')}"
        if self.kind == "procedural":
            steps = [s.get("action", "") if isinstance(s, dict) else str(s) for s in p.get("steps") or []]
            return ". ".join([str(p.get("name", "")), *steps])
        return self.text

    def head(self) -> str:
        """The words that name the memory: a fact's value, the preference, an episode's title, the term,
        the procedure's name. Most of them must be in a source the memory states."""
        p = self.payload
        field_name = {
            "semantic": "value",
            "preference": "preference",
            "episodic": "title",
            "taxonomic": "term",
        }
        return str(p.get(field_name.get(self.kind, "name")) or "")

    def value(self) -> str:
        """The part a model could invent: the fact's value, the preference, the episode, the definition."""
        p = self.payload
        if self.kind == "semantic":
            return str(p.get("value", ""))
        if self.kind == "preference":
            return str(p.get("preference", ""))
        if self.kind == "taxonomic":
            return f"{p.get('term', '')}. {p.get('definition', '')}"
        return self.statement()

    def persons(self, speakers: tuple[str, str]) -> frozenset[str] | None:
        """The speakers the memory is about; None: it claims none (an org item, a fact about a shop)."""
        if self.kind in ORG_KINDS:
            return None
        p = self.payload
        if self.kind in ("semantic", "preference"):
            subject = str(p.get("subject") or "user")
            if subject.strip().lower() in ("user", "the user", "i", "me"):
                alias = (p.get("qualifiers") or {}).get("name")
                named = named_speakers(str(alias), speakers) if alias else frozenset()
                return named or frozenset({speakers[0]})
            return named_speakers(subject, speakers) or None
        if self.kind == "episodic":
            found: set[str] = set()
            for who in p.get("participants") or []:
                if str(who).strip().lower() in ("user", "the user", "i", "me"):
                    found.add(speakers[0])
                found |= named_speakers(str(who), speakers)
            if not found:
                found |= named_speakers(f"{p.get('title', '')} {p.get('summary', '')}", speakers)
            return frozenset(found or {speakers[0]})
        return frozenset({speakers[0]})


def name_forms(speakers: tuple[str, str]) -> dict[str, str]:
    """Lower-cased name -> speaker: each speaker's name, its first word, and short forms of 3+ letters."""
    forms: dict[str, str] = {}
    for name in speakers:
        first = name.split()[0].lower()
        forms[name.lower()] = name
        forms[first] = name
    return forms


def named_speakers(text: str, speakers: tuple[str, str]) -> frozenset[str]:
    forms = name_forms(speakers)
    found = set()
    for tok in tokens(text):
        low = tok.lower().replace(RSQUO, "'").removesuffix("'s")
        if low in forms:
            found.add(forms[low])
        elif len(low) >= 3 and tok[0].isupper():
            found |= {n for f, n in forms.items() if f.startswith(low) and f != low}
    return frozenset(found)


# -- sources: what the conversation says ------------------------------------------------------------------
@dataclass(frozen=True)
class Source:
    kind: str  # observation | summary | turn
    text: str
    persons: frozenset[str]
    session: int
    ref: str  # dia_id(s), or "summary"
    context: str = ""  # a turn's previous turn: its words count, its person does not


@dataclass
class Verdict:
    """A (memory, source) pair as the rule judges it: `states` (about the right person),
    `wrong_person` (the words agree, the person does not) or `no`."""

    verdict: str
    shared: int
    cover: float
    missing_anchors: tuple[str, ...]


def pair_verdict(memory: Memory, source: Source, speakers: tuple[str, str], recall: bool = False) -> Verdict:
    names = frozenset(name_forms(speakers))
    mw = words(memory.statement(), names)
    own = words(source.text, names)
    sw = words(f"{source.context}\n{source.text}", names) if source.context else own
    ov = overlap(mw, sw, words(memory.head(), names).content, own)
    verdict = "no"
    if ov.states(len(mw.content), loose=not recall):
        persons = memory.persons(speakers)
        if persons is None:
            verdict = "no" if recall else "states"
        else:
            verdict = "states" if persons & source.persons else "wrong_person"
    return Verdict(verdict, ov.shared, round(ov.cover, 3), ov.missing_anchors)


def is_personal(memory: Memory, speakers: tuple[str, str]) -> bool:
    """An org item that is a user's own phrase: first or second person, or naming a speaker."""
    p = memory.payload
    head = str(p.get("term") or p.get("name") or "")
    said = memory.statement()
    low = {t.lower().replace(RSQUO, "'") for t in WORD.findall(said)}
    low |= {x.split("'")[0] for x in low if "'" in x}
    return bool(low & FIRST_PERSON) or bool(named_speakers(said, speakers)) or len(tokens(head)) > 6


@dataclass
class Judged:
    conversation: str
    memory: Memory
    verdict: str  # right | wrong_subject | invented | unsupported
    best: Source | None
    best_verdict: Verdict | None
    org_right: bool | None

    def pairs(self, speakers: tuple[str, str]) -> list[dict[str, Any]]:
        if self.best is None or self.best_verdict is None:
            return []
        return [pair_record(self.conversation, speakers, self.memory, self.best, self.best_verdict, False)]


def pair_record(
    conversation: str,
    speakers: tuple[str, str],
    memory: Memory,
    source: Source,
    verdict: Verdict,
    recall: bool,
) -> dict[str, Any]:
    """A judged pair as bench/data/extraction_handcheck.jsonl keeps it (all the rule needs to judge it again)."""
    return {
        "conversation": conversation,
        "speakers": list(speakers),
        "recall": recall,
        "memory": {"kind": memory.kind, "payload": memory.payload, "org": memory.org},
        "source": {
            "kind": source.kind,
            "text": source.text,
            "context": source.context,
            "persons": sorted(source.persons),
            "ref": source.ref,
            "session": source.session,
        },
        "rule": verdict.verdict,
    }


def replay(record: dict[str, Any]) -> str:
    """The rule's verdict on a pair kept by `pair_record`."""
    m, s = record["memory"], record["source"]
    memory = Memory(m["kind"], m["payload"], "", bool(m.get("org")))
    source = Source(
        s["kind"],
        s["text"],
        frozenset(s["persons"]),
        int(s.get("session") or 0),
        s.get("ref", ""),
        s.get("context", ""),
    )
    speakers = (record["speakers"][0], record["speakers"][1])
    return pair_verdict(memory, source, speakers, recall=bool(record.get("recall"))).verdict


@dataclass
class Conversation:
    speakers: tuple[str, str]
    observations: list[Source]
    summaries: list[Source]
    turns: list[Source]

    @classmethod
    def from_locomo(cls, conv: dict[str, Any], sessions: int) -> Conversation:
        speakers = (str(conv["speaker_a"]), str(conv["speaker_b"]))
        numbers = sorted(int(m.group(1)) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)))[:sessions]
        observations, summaries, turns = [], [], []
        for n in numbers:
            for speaker, facts in (conv.get(f"session_{n}_observation") or {}).items():
                for fact in facts:
                    text, evidence = fact[0], fact[1] if len(fact) > 1 else ""
                    ref = ",".join(evidence) if isinstance(evidence, list) else str(evidence)
                    observations.append(Source("observation", text, frozenset({speaker}), n, ref))
            for sentence in SENTENCE.split(str(conv.get(f"session_{n}_summary") or "")):
                if sentence.strip():
                    named = named_speakers(sentence, speakers) or frozenset(speakers)
                    summaries.append(Source("summary", sentence.strip(), named, n, "summary"))
            previous = ""
            for t in conv.get(f"session_{n}") or []:
                text = str(t.get("text") or "")
                if t.get("blip_caption"):
                    text += f" [shared a photo: {t['blip_caption']}]"
                turns.append(
                    Source(
                        "turn", text, frozenset({str(t.get("speaker"))}), n, str(t.get("dia_id")), previous
                    )
                )
                previous = text
        return cls(speakers, observations, summaries, turns)

    def judge(self, memory: Memory, conversation: str = "") -> Judged:
        """The memory's verdict: right (it states a source about the right person), wrong_subject (only
        about another speaker), invented (its value has an anchor or most of its words in no turn), or
        unsupported (none of these: no single thing said holds it)."""
        best: tuple[tuple[int, int, float], Source, Verdict] | None = None
        found = {"states": False, "wrong_person": False}
        for source in (*self.observations, *self.summaries, *self.turns):
            v = pair_verdict(memory, source, self.speakers)
            if v.verdict in found:
                found[v.verdict] = True
            rank = ({"states": 2, "wrong_person": 1}.get(v.verdict, 0), v.shared, v.cover)
            if best is None or rank > best[0]:
                best = (rank, source, v)
        if found["states"]:
            verdict = "right"
        elif found["wrong_person"]:
            verdict = "wrong_subject"
        elif self.invented(memory):
            verdict = "invented"
        else:
            verdict = "unsupported"
        org_right = (verdict == "right" and not is_personal(memory, self.speakers)) if memory.org else None
        return Judged(
            conversation, memory, verdict, best[1] if best else None, best[2] if best else None, org_right
        )

    def invented(self, memory: Memory) -> bool:
        """A value no turn states: an anchor of the value in no turn, or most of its words in none."""
        names = frozenset(name_forms(self.speakers))
        said = words("\n".join(t.text for t in self.turns), names)
        value = words(memory.value(), names)
        if any(not anchor_in(a, said.every) for a in value.anchors):
            return True
        if not value.content:
            return False
        return len(value.content & said.content) / len(value.content) < 0.5

    def recalled(self, memories: list[Memory]) -> dict[Source, list[Memory]]:
        """Each observation -> the memories (of a speaker) that state it about its speaker."""
        return {
            obs: [m for m in memories if pair_verdict(m, obs, self.speakers, recall=True).verdict == "states"]
            for obs in self.observations
        }

    def recall_pairs(self, memories: list[Memory], conversation: str) -> list[dict[str, Any]]:
        """Each observation with the memory closest to stating it (its rule verdict), for the hand check."""
        out = []
        for obs in self.observations:
            best: tuple[tuple[int, int, float], Memory, Verdict] | None = None
            for m in memories:
                v = pair_verdict(m, obs, self.speakers, recall=True)
                rank = ({"states": 2, "wrong_person": 1}.get(v.verdict, 0), v.shared, v.cover)
                if v.shared and (best is None or rank > best[0]):
                    best = (rank, m, v)
            if best is not None:
                out.append(pair_record(conversation, self.speakers, best[1], obs, best[2], True))
        return out


def has_observations(conv: dict[str, Any]) -> bool:
    return any(re.fullmatch(r"session_\d+_observation", k) and v for k, v in conv.items())


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def figures(judged: list[Judged], truth: dict[str, Conversation], kinds: list[str]) -> dict[str, Any]:
    """Per kind and overall: recall (speaker A, and B apart), precision, wrong-subject and invented rates,
    org items and their precision."""
    by_conv: dict[str, list[Memory]] = defaultdict(list)
    for j in judged:
        by_conv[j.conversation].append(j.memory)
    hits: dict[str, Counter[str]] = {"a": Counter(), "b": Counter()}
    totals = {"a": 0, "b": 0}
    for name, conv in truth.items():
        recalled = conv.recalled(by_conv.get(name, []))
        for obs, mems in recalled.items():
            side = "a" if conv.speakers[0] in obs.persons else "b"
            totals[side] += 1
            if mems:
                hits[side]["all"] += 1
            for kind in {m.kind for m in mems}:
                hits[side][kind] += 1

    def block(items: list[Judged], kind: str) -> dict[str, Any]:
        verdicts = Counter(j.verdict for j in items)
        n = len(items)
        return {
            "memories": n,
            "recall": _rate(hits["a"][kind], totals["a"]),
            "recall_other_speaker": _rate(hits["b"][kind], totals["b"]),
            "precision": _rate(verdicts["right"], n),
            "wrong_subject_rate": _rate(verdicts["wrong_subject"], n),
            "invented_rate": _rate(verdicts["invented"], n),
            "unsupported_rate": _rate(verdicts["unsupported"], n),
        }

    overall = block(judged, "all")
    org = [j for j in judged if j.memory.org]
    return {
        **overall,
        "observations": totals["a"],
        "observations_other_speaker": totals["b"],
        "org_items": len(org),
        "org_precision": _rate(sum(1 for j in org if j.org_right), len(org)),
        "per_kind": {k: block([j for j in judged if j.memory.kind == k], k) for k in kinds},
    }
