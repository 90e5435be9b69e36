r"""Issue 33's twenty-ninth independent probe (h-probe29, on main 84ba980), over HTTP on a running local stack
(tests/e2e/probe_stack.py) whose project config makes semantic facts org-wide (terms and procedures are org
by default); finding 5's extraction test and finding 6 start stacks of their own (terms extracted by the
offline rules; a data dir to read). All of issue 33's classes were in scope; the payloads are none of the
earlier probes' (test_probe_findings.py ... test_probe28_findings.py). Each finding's test fails on 84ba980
for the reason given (seen with `--runxfail`) and is marked `xfail(strict=True)`; the attacks that held are
listed below, a few as passing tests.

FINDINGS. "<own>" is a test's unique suffix; "bob", "eve", "ivan" are one-user service-account keys; "the
tenant key" is the tenant-wide memory_service key; "<T>" is the token of the block served.

1. (LOW: needs a judging model that errs; the guard exists for exactly that) A correction read as a
  restatement when a model judges it. Since docs/adr/0080 the rules compare a key's restatement to the letter,
  so over HTTP with the offline provider every pair below is a 201 UPDATE (held). But when a judging model
  (the deployed stack's) calls a memory of another key found by meaning a REINFORCE, `decide` refuses it only
  when "the numbers or negations differ" (`hard_anchors`, the one table): "15 mph" / "15 kph", "40 ppm" /
  "40 ppb" (also psi/bar, rpm/rps, volts/amps), "semimonthly" / "triweekly", "midyear" / "midmonth",
  "lunchtime" / "teatime", "ten grand" / "ten m", "pairs" / "trios", "dont" / "do", "harmful" / "harmless"
  (and "colder"/"warmer", "lowered"/"raised", "upstairs"/"downstairs") have equal anchors, so the model's
  REINFORCE stands and the correction is lost (the issue's "yearly" / "weekly" is refused: held). Cause:
  `layers/core/mongomem/longterm/write/decide.py::_by_meaning` (the `hard_anchors` guard) over
  `kinds/meaning_table.py` (no units beyond a few, no "semi-"/"tri-" periods, "mid-" words, meal times,
  comparatives, "-less" negations, apostrophe-less contractions). Fix: refuse a model's REINFORCE whenever
  the two values differ in any word outside a small list of fillers (the letter, as ADR 0080 does for keys),
  rather than relying on the table; or grow the table (units of measure, "semi"/"tri" + period, "mid" +
  period, "dont"/"cant"/"wont"/"isnt", "-less"/"-ful") with a property test over such pairs.
  Test: `test_a_models_reinforce_across_a_correction_is_refused` (calls `decide` with a model's REINFORCE).

2. (MED, marker criterion (b): content that changes how the block's own closing lines are drawn) The
  twenty-eighth probe's fix keeps a drawn element's name when "an end tag" of it comes later in the text,
  but the end tags are counted by a regular expression over the whole text: one inside a comment, a CDATA
  section, a "<?" construct or an attribute value, one never ended ("</s daily", served as "< /s"), and one
  written as text ("&lt;/s&gt;") all count, though a browser never reads them as an end tag. Bob's one-user
  new org term {"term": "MK<OWN>", "definition": "the loading bay <own> <s> is counted <!-- </s> -->
  daily"} (or '<s> ... <a title="</s>">here</a>', "<s> ... </s daily", "<s> ... &lt;/s&gt;", "<s> ...
  <![CDATA[ </s> ]]>", thirty "<big>" with their end tags in a comment, '<a href="https://example.com/reset">
  ... <b title="</a>">x</b>') -> 201 ADD, org; eve's POST /v1/context serves the markup as written, and
  Chromium draws the block's closing line "[/mongomem-memory token=<T>]" struck through (line-through), in
  3,086 px type (3,592 px high), or as an underlined blue link, where the opening line is 13 px plain black.
  Cause: `layers/core/mongomem/markers.py::_inert_markup` (`ends` is built by `_INERT_TAG.finditer` over the
  raw text, whatever construct each match is inside). Fix: count an end tag only where the main pass reads
  it as a tag (outside comments, "<!"/"<?" constructs, attribute values, and only when it is closed by a
  literal ">"): e.g. a first pass with the same state machine, or balance in one pass by closing (or serving
  as text) every drawn element still open at the item's end. Test:
  `test_an_end_tag_a_browser_never_reads_leaves_no_element_open`.

3. (MED, marker criterion (b): content that moves the block's own closing lines) An end tag of a drawn
  element no start tag opened is served as written: "</pre>" (or "</PRE >", "</p></pre>") in bob's one-user
  org term {"term": "MK<OWN>", "definition": "the loading bay <own> </pre> is counted daily"} -> 201 ADD,
  org; a page that shows the block in a `<pre>` (the probes' view; how text blocks are shown) ends it there:
  the line breaks after it collapse and the closing line "[/mongomem-memory token=<T>]" is drawn on the
  content's line (left edge 113 px instead of 8 px) in 16 px proportional type, where the opening line is
  13 px monospace. The same holds for whatever element an app draws the block in (`</div>`, `</li>`,
  `</blockquote>`, `</a>` are all drawn elements). Cause: `markers.py::_inert_markup` (start tags are
  balanced against later end tags; end tags are never balanced against earlier start tags). Fix: serve as
  text ("< /pre>") an end tag with no open start tag of its element before it in the same item. Test:
  `test_a_stray_end_tag_leaves_the_closing_lines_where_they_are`.

4. (MED, inputs: one user's writes hold every user's call; quadratic) GET /v1/status counts the tenant's
  conflicting facts on every call, whoever calls it (`conflicts(tenant, None)`, a one-user key's call too),
  and `longterm/conflicts.py::conflicts` compares the active versions of a key pairwise
  (`kind.same_content` -> `same_value`: anchors and word sets of both texts, ~8-15 ms for two 3,900-character
  values). Bob's one-user key writes 40 private facts of one key {"subject": "yard <own>", "attribute":
  "rule", "value": <3,900 characters of distinct words>} with `reconcile: false` (allowed to any key) ->
  40 x 201 in ~1.5 s; eve's GET /v1/status then takes ~12-15 s (0.03 s before); with 60 facts 27 s for eve,
  alice and bob's GET /v1/memories/conflicts alike (it grows with the square of the count: a few hundred
  facts pass API Gateway's 29 s and every status call, the console's and health checks', fails). The answer
  also shows a one-user key the tenant's figures ({"keys": 1, "users": 1}: that other users have conflicts).
  Cause: `layers/core/mongomem/api/status.py::get_status` (`conflicts` of the whole tenant for any caller)
  and `longterm/conflicts.py::conflicts` (O(n^2) comparisons, no bound per key). Fix: count conflicts from
  the group sizes the aggregation already returns (a key with two or more active versions), or cache the
  figure per tenant; compare at most a bounded number of versions per key (e.g. by `worded` value, a hash
  set: O(n)); a one-user caller's status counts its own user only; refuse `reconcile: false` to a one-user
  key or cap active versions per key. Test: `test_one_users_conflicting_facts_do_not_hold_another_users_status`.

5. (HIGH: one user's facts served to every user of the tenant; the twenty-fifth to twenty-eighth probes'
  first-person class, in other languages) `kinds/base.py::in_first_person`, `about_the_user` and
  `names_the_user` read English only ("my", "I", "me", "user"), as does the org screen of extraction
  (`extraction/orgscreen.py::_FIRST_PERSON`). Bob's one-user POST /v1/memories with no `visibility`
  {"type": "semantic", "payload": {"subject": "mi médico <own>", "attribute": "diagnóstico", "value":
  "diabetes tipo 2 <own>"}} (or subjects "meine Bank", "ma banque", "我的医生", "yo", "ich", "я", "el usuario";
  a German value "ich spritze jeden Morgen 10 Einheiten"; a term, org in every project by default,
  {"term": "MEINPIN<own>", "definition": "meine PIN für das Konto ist 4711 <own>"}) -> 201 ADD, visibility
  "org"; eve's GET /v1/memories lists each. The English forms are private (held). Through extraction (the
  default config's org terms): bob's turns "PINX<OWN> stands for meine Bankkarten-PIN 4711 bei der
  Sparkasse.", "KOD<OWN> stands for mi código de la puerta de casa 4411.", "MDP<OWN> stands for mon mot de
  passe Zorblax du coffre." -> three org terms eve lists ("PINY<OWN> stands for my bank card PIN ..." is
  private). The meaning table already reads negation in German, French, Spanish, Italian, Portuguese, Dutch
  and the Nordic languages; the first person is read in none of them. Cause:
  `layers/core/mongomem/kinds/base.py` (`_FIRST_PERSON`, `_FIRST_PERSON_WORDS`, `_SELF_WORDS`, "user" in
  `names_the_user`/`about_the_user`), `longterm/service.py::MemoryService.create`,
  `extraction/orgscreen.py::org_verdict`. Fix: the first person singular (and "user") of the languages the
  table reads (mi/mio/mia/yo/me, mein/meine/ich/mich/mir, mon/ma/mes/je/moi, meu/minha/eu, mijn/ik, min/jeg,
  我/我的, 私/僕, я/мой ...), or, better, the twenty-seventh probe's suggestion: a one-user direct write with no
  `visibility` is private unless the caller names "org", and an extracted term from one user's conversation
  is private until the tenant (or enough users) state it. Tests:
  `test_a_one_user_write_in_the_first_person_of_any_language_stays_private`,
  `test_an_extracted_term_in_the_first_person_of_any_language_stays_private`.

6. (MED, erasure leaving copies) Words only the erased user said, carried by an org version that survives,
  stay in the vector index's file. Ivan's one-user new org term {"term": "IVT<OWN>", "definition": "the
  ramp where trailers are sealed at night", "aliases": ["ZQXALIAS<OWN>"]} -> 201 ADD, org; the tenant key's
  correction {"term": "IVT<OWN>", "definition": "... at dawn"} -> 201 UPDATE, carrying ivan's alias
  (`TaxonomicKind.updated`); DELETE /v1/users/ivan -> 200 {"org_memories_deleted": 1,
  "org_memories_updated": 1, ...}: the surviving version is rewritten without the alias (eve's search
  shows "IVT<OWN>: the ramp ... at dawn"; the index's live row too). But 10 s later, and after the stack
  stopped, data/vectors/vectors.sqlite3 still holds "IVT<OWN> (ZQXALIAS<OWN>): the ramp where trailers are
  sealed at dawn" in a freed region (no live row holds it; the database's journal is clean within 10 s).
  `test_erasure_copies.py` checks only a user's own rows (deleted: `delete_user` scrubs); a row rewritten
  because of an erasure is re-indexed by `upsert` (INSERT OR REPLACE), which neither zeroes the old image
  nor checkpoints. Cause: `layers/core/mongomem/vectors/embedded.py::EmbeddedIndex.upsert` (no `_scrub`,
  REPLACE's old cell left in the file) reached from `erasure.py::erase_user` (`resync` / index_sync of the
  `changed` org versions after `store.settle()`). Fix: re-index the changed versions by DELETE (secure) then
  INSERT and `_scrub()` (or `VACUUM`) after an erasure's re-index; extend the data-dir test to an erased
  user's words carried by another user's or the tenant's version. Test:
  `test_erasure_leaves_no_copy_of_words_an_org_version_carried`.

7. (HIGH: one user's facts served to every user; the twenty-eighth probe's "caller's id" rule, partly) A
  subject names the caller only when it holds the caller's whole id as words. For a user whose id is an
  e-mail address ("bob.smith<own>@acme.com": what most apps use), the local part is how others name them:
  their one-user POST /v1/memories {"type": "semantic", "payload": {"subject": "bob.smith<own>",
  "attribute": "home address", "value": "12 Elm St"}} (or "bob.smith<own>'s locker") with no `visibility`
  -> 201 ADD, visibility "org" (listed to every user, as in finding 5). User "bob" writing "bob's locker" is
  kept private, and so is the whole address as the subject. Cause: `kinds/base.py::about_the_user` /
  `names_the_user` (`_has(words, own)` with `own` = every word of the id: "bob smith<own> acme com").
  Fix: read the id's local part (before "@") as the user's name too (and, for ids with separators, its
  leading words), or the default-private rule of finding 5. Test:
  `test_a_fact_about_a_user_named_by_the_local_part_of_their_id_stays_private`.

HELD (tried on the running stack or against the functions it runs; passing checks, not kept as tests unless
named)
- Corrections over HTTP: the ten pairs of finding 1 (units, frequencies, periods, times, quantities,
  negations outside the table) written by the tenant key as corrections of an org term -> 201 UPDATE each
  (ADR 0080's letter comparison by key).
- Expiry: an org procedure, an org term and two conflicting private facts with `expires_at` 3 s ahead; 4.5 s
  later GET /v1/memories/{id}, `?history=true`, `/skill`, POST /v1/procedures/discover, /v1/domains,
  /v1/memories/conflicts, the list, search, and POST .../feedback (404) show none of them.
- Shared memory: 200 distinct one-user proposals on one org term (each 3 kB): PROPOSE each, the lineage's
  history stays at 7 versions, eve's restatement, proposal, history and context answer in <= 0.22 s.
  Metadata of a one-user restatement of shared memory changes nothing (`writer._restated`). MCP with
  `--user-id` sends `x-mongomem-as-user` on every SDK call (`_transport._request`), and every route reads the
  narrowed principal's `fixed_user_id`; the working-memory routes all take `agent_id`.
- Inputs: NaN, Infinity, 1e400, a 400-digit integer, 3,000-deep and 200-deep nesting, lone surrogates (in
  metadata, a value, a turn), keys with NUL, "$" or ".", duplicate keys, -0.0, in POST /v1/memories and
  working memory: 400/422 each, never a 5xx.
- Markers: an end tag inside "</s\x00>" (NUL dropped: a real end tag), a zero-width space in an end tag, a
  look-alike "K" in "</SK>", "<u><!----></u>", misnested "<b><s><i>x</b></i></s>", "<p><s>x</p>y</s>",
  "<s>x<h1>y</s></h1>", '<a href>x<div>y</a></div>' leave the closing lines drawn as the opening ones
  (Chromium). The TypeScript SDK's `marked` (random token per call) and the SDK's `context_block` keep the
  server's block; Mastra's `MongomemWorkingMemory` processor uses the server's marked instructions.

STATUS on main: all seven fixed, their markers removed (finding 5's extraction test is in
test_probe29_extraction.py and finding 6's in test_probe29_erasure.py: two local stacks in one process share
the functions' configuration). (1) A lone number's unit, a period said in one word with a prefix, "dont" /
"cant" and "-less" are anchors; pair / trio, "grand" and meal times joined the table
(`kinds/meaning.py::_units`, `_word_meanings`; property tests in tests/unit/test_meaning_table.py). (2, 3) A
drawn element's start and end tags are kept only where a strictly nested reading of the text's own tags pairs
them (same name, same form of "<"); a tag inside a comment or a "<!" / "<?" construct, an end tag nothing
opened, and a start tag nothing closes are served as text (`markers._inert_markup`, `_unpaired`). (4)
/v1/status counts a key's conflict from its first two distinct versions and compares for 0.5 s at most (the
listing for 5 s); `complete: false` says when the time ran out (`longterm/conflicts.py`). (5) The first
person and "user" are read in the languages the meaning table reads and in Chinese, Japanese, Korean,
Russian, Ukrainian, Hindi and Arabic (`kinds/base.py::_FIRST_PERSON`, `_USER_WORD`), by direct writes and
extraction's org screen alike. (6) An erasure deletes the index entries of the org versions that lost the
user's words (zeroed and checkpointed) before they are written again (`erasure.erase_user`). (7) An e-mail
id's local part names its user (`kinds/base.py::_own_names`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.e2e.probe_stack import (
    Stack,
    answering_stack,
    call,
    config,
    filled,
    unique,
    write,
)

USERS = ("alice", "bob", "eve", "frank", "ivan")
CONFIG = config(org=("semantic",))


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    yield from answering_stack(tmp_path_factory.mktemp("probe29-findings"), USERS, CONFIG)


# -- 1. a model's REINFORCE across a correction the table has no word for is not refused (LOW) ----------
JUDGED_CORRECTIONS = {
    "unit mph to kph": (
        "the forklift speed limit in the north yard is 15 mph near the loading docks",
        "the forklift speed limit in the north yard is 15 kph near the loading docks",
    ),
    "unit ppm to ppb": (
        "the nitrate limit for the fish tanks in the north yard is 40 ppm near the docks",
        "the nitrate limit for the fish tanks in the north yard is 40 ppb near the docks",
    ),
    "frequency semimonthly to triweekly": (
        "the fire drill for the freezer dock is held semimonthly by the safety team",
        "the fire drill for the freezer dock is held triweekly by the safety team",
    ),
    "period midyear to midmonth": (
        "the safety audit of the freezer dock is held midyear by the compliance team",
        "the safety audit of the freezer dock is held midmonth by the compliance team",
    ),
    "time lunchtime to teatime": (
        "the freezer dock closes at lunchtime on the day of the stock count",
        "the freezer dock closes at teatime on the day of the stock count",
    ),
    "quantity ten grand to ten m": (
        "shipments to the freezer dock are insured up to ten grand per truck load",
        "shipments to the freezer dock are insured up to ten m per truck load",
    ),
    "quantity pairs to trios": (
        "the night shift works in pairs at the freezer dock of the north warehouse",
        "the night shift works in trios at the freezer dock of the north warehouse",
    ),
    "negation dont": (
        "drivers dont unload pallets at the freezer dock after the evening shift",
        "drivers do unload pallets at the freezer dock after the evening shift",
    ),
    "negation harmful to harmless": (
        "the freezer dock coolant is harmful to touch without gloves for the contractor team",
        "the freezer dock coolant is harmless to touch without gloves for the contractor team",
    ),
}


@pytest.mark.parametrize(("before", "after"), JUDGED_CORRECTIONS.values(), ids=JUDGED_CORRECTIONS.keys())
def test_a_models_reinforce_across_a_correction_is_refused(before: str, after: str) -> None:
    """LOW (needs a judging model that errs: the guard exists for exactly that). A private fact found by
    meaning (another key) and a model's REINFORCE of it: `decide` refuses it when "the numbers or negations
    differ" (`hard_anchors`), as it does for "yearly" / "weekly"; for these pairs it keeps the REINFORCE and
    the correction is lost."""
    from mongomem.longterm.write.decide import decide
    from mongomem.longterm.write.decision import Candidates, NewLineage, Thresholds
    from tests.unit.test_write_decide import NOW, fact, judged, new, stored

    held = stored(fact("dock rule", before), 11)
    found = Candidates(by_meaning=[(0.85, held)], judgement=judged("REINFORCE", held))
    verdict = decide(new(fact("yard rule", after)), found, Thresholds(), NOW)
    assert isinstance(verdict, NewLineage), (type(verdict).__name__, verdict.reason)


def test_held_a_models_reinforce_across_yearly_and_weekly_is_refused() -> None:
    """The issue's pair ("yearly" / "weekly") is refused: the guard reads the table's words."""
    from mongomem.longterm.write.decide import decide
    from mongomem.longterm.write.decision import Candidates, NewLineage, Thresholds
    from tests.unit.test_write_decide import NOW, fact, judged, new, stored

    held = stored(
        fact("dock rule", "the yearly review of greenhouse ventilation logs is done by facilities"), 11
    )
    found = Candidates(by_meaning=[(0.85, held)], judgement=judged("REINFORCE", held))
    said = fact("yard rule", "the weekly review of greenhouse ventilation logs is done by facilities")
    assert isinstance(decide(new(said), found, Thresholds(), NOW), NewLineage)


# -- 2. a drawn element "closed" by an end tag a browser never reads restyles the closing lines (MED) -----
def _context(stack: Stack, key: str, query: str, **more: Any) -> str:
    body = {"session_id": f"s-{unique()}", "query": query, **more}
    status, context = call(stack, key, "POST", "/v1/context", body)
    assert status == 200, context
    return str(context["context"])


def _served_alone(stack: Stack, definition: str, own: str) -> str:
    """Bob's one-user new org term "MK<OWN>" defined as `definition` (201 ADD, org), and the context eve is
    served for it (the term the block's only memory)."""
    since = datetime.now(UTC).isoformat()
    term = {"term": f"MK{own.upper()}", "definition": definition}
    status, written = write(stack, stack.users["bob"], "taxonomic", term)
    assert (status, written["decision"], written["memory"]["visibility"]) == (201, "ADD", "org"), written
    served = _context(
        stack, stack.users["eve"], f"MK{own.upper()} loading bay", observed_after=since, memories_top_k=1
    )
    assert f"the loading bay {own}" in served, served
    return served


def _token(block: str) -> str:
    return block.split('token="', 1)[1].split('"', 1)[0]


# How a browser draws a line of the block: its font size, decoration, colour and left edge (Chromium).
_DRAWN_AS = """(line) => {
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    const at = node.data.indexOf(line);
    if (at < 0) continue;
    const range = document.createRange();
    range.setStart(node, at);
    range.setEnd(node, at + line.length);
    const box = range.getBoundingClientRect();
    const style = getComputedStyle(node.parentElement);
    return [style.fontSize, style.textDecorationLine, style.color, Math.round(box.x), Math.round(box.height)];
  }
  return null;
}"""


def _drawn_as(browser: Any, block: str, line: str) -> Any:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        page.set_content(f"<!doctype html><html><body><pre>{block}</pre></body></html>")
        return page.evaluate(_DRAWN_AS, line)
    finally:
        page.close()


UNREAD_END_TAGS = {
    "end tag in a comment": "<s> is counted <!-- </s> --> daily",
    "end tag in an attribute": '<s> is counted <a title="</s>">here</a> daily',
    "end tag never ended": "<s> is counted </s daily",
    "end tag escaped": "<s> is counted &lt;/s&gt; daily",
    "end tag in CDATA": "<s> is counted <![CDATA[ </s> ]]> daily",
    "big, end tags in a comment": "<big>" * 30 + " is counted <!-- " + "</big>" * 30 + " --> daily",
    "link, end tag in an attribute": '<a href="https://example.com/reset"> is counted <b title="</a>">x</b> daily',
}


@pytest.mark.parametrize("markup", UNREAD_END_TAGS.values(), ids=UNREAD_END_TAGS.keys())
def test_an_end_tag_a_browser_never_reads_leaves_no_element_open(
    stack: Stack, browser: Any, markup: str
) -> None:
    """MED (criterion (b)). Bob's one-user new org term {"term": "MK<OWN>", "definition": "the loading bay
    <own> <s> is counted <!-- </s> --> daily"} (or the "</s>" inside an attribute's value, thirty "<big>",
    a link) -> 201 ADD, org; eve's context serves the markup as written (`_inert_markup` counts the "</s>"
    in the comment as the element's end), and Chromium draws the block's closing line struck through (in
    huge type, as a link), where its opening line is plain."""
    own = unique()
    served = _served_alone(stack, f"the loading bay {own} {markup}", own)
    token = _token(served)
    opening = _drawn_as(browser, served, f"[mongomem-memory source=context token={token}:")
    closing = _drawn_as(browser, served, f"[/mongomem-memory token={token}]")
    assert opening is not None and closing is not None, served.split("\n")
    assert closing == opening, (closing, opening)


# -- 3. a stray end tag closes the page's element the block is drawn in (MED) -------------------------------
STRAY_END_TAGS = {
    "end of pre": "</pre>",
    "end of pre, spaced and in capitals": "</PRE >",
    "end of p and of pre": "</p></pre>",
}


@pytest.mark.parametrize("stray", STRAY_END_TAGS.values(), ids=STRAY_END_TAGS.keys())
def test_a_stray_end_tag_leaves_the_closing_lines_where_they_are(
    stack: Stack, browser: Any, stray: str
) -> None:
    """MED (criterion (b)). Bob's one-user new org term {"term": "MK<OWN>", "definition": "the loading bay
    <own> </pre> is counted daily"} -> 201 ADD, org; eve's context serves "</pre>" as written (a drawn
    element's end tag, no start tag before it in the text), and a page that draws the block in a `<pre>`
    (the probes' view, and how a block of text is shown) ends its `<pre>` there: the block's closing line
    is drawn on the content's line (its line breaks collapsed: left edge 113 px, not 8 px), in 16 px
    proportional type where the opening line is 13 px monospace."""
    own = unique()
    served = _served_alone(stack, f"the loading bay {own} {stray} is counted daily", own)
    token = _token(served)
    opening = _drawn_as(browser, served, f"[mongomem-memory source=context token={token}:")
    closing = _drawn_as(browser, served, f"[/mongomem-memory token={token}]")
    assert opening is not None and closing is not None, served.split("\n")
    assert closing == opening, (closing, opening)


# -- 4. one user's conflicting facts hold every user's /v1/status (MED) ------------------------------------
def test_one_users_conflicting_facts_do_not_hold_another_users_status(stack: Stack) -> None:
    """MED (inputs: one user's writes hold every user's call). Bob's one-user key writes 40 private facts of
    one key with `reconcile: false` (allowed), each value 3,900 characters of distinct words -> 40 x 201 in
    ~1.5 s. Every GET /v1/status, whoever calls it (eve's one-user key too), counts the tenant's conflicts
    (`conflicts(tenant, None)`): 780 `same_value` comparisons of 3,900-character values, ~8-15 ms each.
    Seen: eve's status 0.03 s before, ~12 s after (60 facts: 27 s; it grows with the square of the count)."""
    import random
    import time as clock

    own = unique()
    rnd = random.Random(7)
    words = "pallet dock north south gate truck seal count shift crate lorry ramp bay yard".split()
    for i in range(40):
        value = " ".join(rnd.choice(words) for _ in range(700))[:3900] + f" {i}"
        fact = {"subject": f"yard {own}", "attribute": "rule", "value": value}
        status, written = write(
            stack, stack.users["bob"], "semantic", fact, visibility="private", reconcile=False
        )
        assert status == 201, written
    started = clock.monotonic()
    status, answer = call(stack, stack.users["eve"], "GET", "/v1/status")
    took = clock.monotonic() - started
    assert status == 200, answer
    assert took < 3.0, (round(took, 1), answer.get("conflicting_facts"))


# -- 5. a one-user write in the first person of another language is published to the tenant (HIGH) ------
OTHER_LANGUAGES = {
    "Spanish subject 'mi medico'": (
        "semantic",
        {"subject": "mi médico {own}", "attribute": "diagnóstico", "value": "diabetes tipo 2 {own}"},
    ),
    "German subject 'meine Bank'": (
        "semantic",
        {"subject": "meine Bank {own}", "attribute": "PIN", "value": "4711 {own}"},
    ),
    "French subject 'ma banque'": (
        "semantic",
        {"subject": "ma banque {own}", "attribute": "code secret", "value": "4711 {own}"},
    ),
    "Chinese subject 'my doctor'": (
        "semantic",
        {"subject": "我的医生 {own}", "attribute": "诊断", "value": "糖尿病 {own}"},
    ),
    "Spanish subject 'yo'": (
        "semantic",
        {"subject": "yo {own}", "attribute": "grupo sanguíneo", "value": "O negativo {own}"},
    ),
    "German subject 'ich'": (
        "semantic",
        {"subject": "ich {own}", "attribute": "Blutgruppe", "value": "0 negativ {own}"},
    ),
    "Russian subject 'ya'": (
        "semantic",
        {"subject": "я {own}", "attribute": "группа крови", "value": "первая {own}"},
    ),
    "Spanish subject 'el usuario'": (
        "semantic",
        {"subject": "el usuario {own}", "attribute": "contraseña", "value": "Zorblax {own}"},
    ),
    "German value in the first person": (
        "semantic",
        {
            "subject": "insulin {own}",
            "attribute": "dose",
            "value": "ich spritze jeden Morgen 10 Einheiten {own}",
        },
    ),
    "German term (org by default) in the first person": (
        "taxonomic",
        {"term": "MEINPIN{own}", "definition": "meine PIN für das Konto ist 4711 {own}"},
    ),
}


@pytest.mark.parametrize(("kind", "payload"), OTHER_LANGUAGES.values(), ids=OTHER_LANGUAGES.keys())
def test_a_one_user_write_in_the_first_person_of_any_language_stays_private(
    stack: Stack, kind: str, payload: dict[str, Any]
) -> None:
    """HIGH (one user's facts served to every user of the tenant). Bob's one-user POST /v1/memories with no
    `visibility` {"type": "semantic", "payload": {"subject": "mi médico <own>", "attribute": "diagnóstico",
    "value": "diabetes tipo 2 <own>"}} (or "meine Bank", "ma banque", "我的医生", "yo", "ich", "я", "el
    usuario"; a German value "ich spritze ..."; a term, org by default in every project, "meine PIN für das
    Konto ist 4711") -> 201 ADD, visibility "org"; eve lists it. Its English forms ("my doctor", "me", "I",
    "the user", "my PIN ...") are kept private."""
    own = unique()
    body = filled(payload, own)
    status, written = write(stack, stack.users["bob"], kind, body)
    assert status == 201, written
    seen = [m for m in _listed(stack, "eve", kind) if own in json.dumps(m["payload"], ensure_ascii=False)]
    assert (written["memory"]["visibility"], seen) == ("private", []), (written["memory"]["visibility"], seen)


def test_held_a_one_user_write_in_the_first_person_in_english_stays_private(stack: Stack) -> None:
    """The English forms are private: {"subject": "my doctor <own>", ...} and a term "my PIN ..."."""
    own = unique()
    for kind, payload in (
        (
            "semantic",
            {"subject": f"my doctor {own}", "attribute": "diagnosis", "value": f"type 2 diabetes {own}"},
        ),
        ("taxonomic", {"term": f"MYPIN{own}", "definition": f"my PIN for the account is 4711 {own}"}),
    ):
        status, written = write(stack, stack.users["bob"], kind, payload)
        assert (status, written["memory"]["visibility"]) == (201, "private"), written


def _listed(stack: Stack, user: str, kind: str) -> list[dict[str, Any]]:
    status, page = call(stack, stack.users[user], "GET", f"/v1/memories?type={kind}&limit=200")
    assert status == 200, page
    return [m for m in page["memories"] if m["status"] == "active"]


# -- 7. a user whose id is an e-mail address is not named by its local part (HIGH) ------------------------
@pytest.mark.parametrize(
    "subject", ["{local}", "{local}'s locker"], ids=["local part", "local part's locker"]
)
def test_a_fact_about_a_user_named_by_the_local_part_of_their_id_stays_private(
    stack: Stack, subject: str
) -> None:
    """HIGH (one user's facts served to every user). A one-user key of user "bob.smith<own>@acme.com" (ids
    that are e-mail addresses are what most apps have) POSTs {"type": "semantic", "payload": {"subject":
    "bob.smith<own>", "attribute": "home address", "value": "12 Elm St"}} (or the subject "bob.smith<own>'s
    locker") with no `visibility` -> 201 ADD, visibility "org"; the same for user "bob" and "bob's locker" is
    private (the twenty-eighth probe's fix), and so is the whole address as the subject (held)."""
    from mongomem.identity.service import create_key

    own = unique()
    user = f"bob.smith{own}@acme.com"
    key = create_key(stack.running.keys, "acme", "service_account", user)[0]
    fact = {
        "subject": subject.format(local=f"bob.smith{own}"),
        "attribute": "home address",
        "value": "12 Elm St",
    }
    status, written = write(stack, key, "semantic", fact)
    assert status == 201, written
    assert written["memory"]["visibility"] == "private", written["memory"]["visibility"]
