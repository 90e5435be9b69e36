"""Org memory from extraction is precise (issue 31, point 5): an org kind's item reaches every user of the
tenant only when it is a term or procedure of the organisation, not one user's phrase."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from mongomem.extraction.guards import screen
from mongomem.extraction.orgscreen import org_verdict
from mongomem.extraction.proposal import TurnView
from mongomem.kinds.taxonomic import Taxonomic

WHEN = datetime(2026, 11, 29, 10, tzinfo=UTC)


def turns(*texts: str) -> list[TurnView]:
    return [TurnView(i + 1, "user" if i % 2 == 0 else "assistant", t, WHEN) for i, t in enumerate(texts)]


def term(term: str, definition: str, **more: Any) -> dict[str, Any]:
    return {"term": term, "definition": definition, "evidence_seqs": [1], **more}


def procedure(name: str, when: str = "When it comes up", **more: Any) -> dict[str, Any]:
    return {"name": name, "when_to_use": when, "steps": ["one", "two"], "evidence_seqs": [1], **more}


TABLE = [
    # (item, the turn it cites, verdict)
    # the case: a feeling, not a definition
    (term("Family time", "a lot to me"), "Family time means a lot to me.", "not_a_term"),
    (term("Your support", "so much to me"), "Your support means so much to me.", "not_a_term"),
    (term("Her friendship", "the world"), "Her friendship means the world.", "not_a_term"),
    # opinions where a definition should be
    (
        term("humidifier", "a great investment for your living room"),
        "A humidifier is a great investment for your living room.",
        "not_a_term",
    ),
    (term("sunset scene", "a great choice"), "A sunset scene is a great choice.", "not_a_term"),
    (
        term("Gantt chart", "a fantastic way to track a project"),
        "A Gantt chart is a fantastic way to track a project.",
        "not_a_term",
    ),
    # the user's own life
    (term("dance fam", "my crew of dancers"), "The dance fam means my crew of dancers.", "personal"),
    (term("home base", "where I keep the van"), "Home base means where I keep the van.", "personal"),
    (
        term("launching pad", "the spot on your coffee table for keys"),
        'Use a "launching pad": the spot on your coffee table for keys.',
        "personal",
    ),
    # everyday words with no sign of a domain term
    (
        term("wet zone", "an area with a sink for cleaning brushes"),
        "A wet zone is an area with a sink for cleaning brushes.",
        "not_term_like",
    ),
    (
        term("tea syrup", "a concentrated tea infusion sweetened with sugar"),
        "A tea syrup is a concentrated tea infusion sweetened with sugar.",
        "not_term_like",
    ),
    # terms of the organisation: acronyms, names, code, quotes, a defining phrase
    (
        term("PIR", "post-incident review, held after an outage"),
        "In our team PIR means post-incident review.",
        None,
    ),
    (term("SLA", "Short for service level agreement"), "SLA stands for service level agreement.", None),
    (
        term("churn", "the share of customers who cancel in a month"),
        "Here, churn means the share of customers who cancel in a month.",
        None,
    ),
    (
        term("hot path", "the request path that must answer under 50 ms"),
        'We call it the "hot path": the request path that must answer under 50 ms.',
        None,
    ),
    (
        term("Kubernetes", "a container orchestration system"),
        "We run everything on Kubernetes, a container orchestration system.",
        None,
    ),
    (
        term("Marley flooring", "the vinyl floor dance studios use"),
        "We always lay Marley flooring, the vinyl floor dance studios use.",
        None,
    ),
    (
        term("k8s_ns", "the namespace of a deployment"),
        "k8s_ns is defined as the namespace of a deployment.",
        None,
    ),
    (
        term("blue-green", "two live copies, traffic switched at once"),
        "Blue-green refers to two live copies, traffic switched at once.",
        None,
    ),
    # procedures: a fragment of a reply is not one; the first person is the user's own routine
    (
        procedure("Congratulations on your upcoming performance! I'd"),
        "Congratulations! 1. a 2. b",
        "not_a_term",
    ),
    (
        procedure("Certainly! Here are the recipes for"),
        "Certainly! Here are the recipes for 1. a 2. b",
        "not_a_term",
    ),
    (procedure("The Dole Plantation is a"), "The Dole Plantation is a 1. a 2. b", "not_a_term"),
    (procedure("Buying a rural property can be"), "Buying a rural property can be 1. a 2. b", "not_a_term"),
    (procedure("Grated cheese is an excellent addition"), "1. a 2. b", "not_a_term"),
    (procedure("Do the task"), "1. a 2. b", "not_a_term"),
    (procedure("Get the most out of this investment"), "1. a 2. b", "not_a_term"),
    (procedure("Bacon, and toss to combine. Slowly"), "1. a 2. b", "not_a_term"),
    (procedure("My morning routine", "When I wake up"), "My morning routine: 1. a 2. b", "personal"),
    (procedure("Clean the sensor on your Canon EOS 80D"), "1. a 2. b", "personal"),
    (procedure("Approach partnerships like the one you're considering"), "1. a 2. b", "personal"),
    (
        procedure("Expense a client dinner", "After paying for a meal with a client."),
        "1. Photograph the receipt 2. Submit",
        None,
    ),
    (procedure("Deploy to production", "When a release is tagged"), "To deploy: 1. tag 2. push", None),
    # steps are read too (issue 33's twenty-seventh probe): the user's own credentials stay theirs, an
    # instruction to "your manager" is how anyone does it
    (
        procedure("Reset the office router", steps=["Open the admin page", "Log in with my password Blue7"]),
        "1. a 2. b",
        "personal",
    ),
    (
        procedure("Pay the dock invoice", steps=["Open the bank portal", "Enter your PIN 7781"]),
        "1. a 2. b",
        "personal",
    ),
    (
        procedure("File an expense", steps=["Photograph the receipt", "Submit to your manager"]),
        "1. a 2. b",
        None,
    ),
]


@pytest.mark.parametrize(
    ("item", "said", "verdict"), TABLE, ids=[str(i.get("term") or i.get("name")) for i, _, _ in TABLE]
)
def test_an_org_items_verdict(item: dict[str, Any], said: str, verdict: str | None) -> None:
    assert org_verdict(item, turns(said)) == verdict


def test_the_screen_refuses_non_terms_keeps_personal_ones_private_and_counts_both() -> None:
    # Given an org kind's items from one conversation
    said = turns(
        "Family time means a lot to me. PIR means post-incident review. A wet zone is an area with a sink."
    )
    items = [
        term("Family time", "a lot to me"),
        term("PIR", "post-incident review"),
        term("wet zone", "an area with a sink"),
    ]
    kind = Taxonomic()
    # When they are screened for the org
    out = screen(kind, items, said, "ana", org=True)
    # Then only the organisation's term is published; the rest stays with the user or is refused
    assert [i["term"] for i in out.items] == ["PIR"]
    assert [i["term"] for i in out.personal] == ["wet zone"]
    assert out.refused == {"not_a_term": 1} and out.kept_private == {"not_term_like": 1}
    # ... while a private kind's items are not judged as terms at all
    assert len(screen(kind, items, said, "ana", org=False).items) == 3


def test_an_org_kinds_facts_about_the_user_stay_the_users() -> None:
    # issue 33's twenty-fifth probe: with semantic facts shared by the organisation, "user name: Zed" and
    # "user home city: Lisbon" were published to every user (and read by each agent as its own user's)
    from mongomem.kinds.semantic import Semantic

    said = turns("My name is Zed and I live in Lisbon. The north dock opens at 7 am.")
    items = [
        {"subject": "user", "attribute": "home city", "value": "Lisbon", "evidence_seqs": [1]},
        {"subject": "Zed", "attribute": "name", "value": "Zed", "evidence_seqs": [1]},
        {"subject": "north dock", "attribute": "opening time", "value": "7 am", "evidence_seqs": [1]},
    ]
    out = screen(Semantic(), items, said, "u-1", org=True)
    assert [i["subject"] for i in out.items] == ["north dock"]
    assert [i["subject"] for i in out.personal] == ["user", "Zed"]  # "My name is": any case
    assert out.kept_private == {"about_user": 1, "names_user": 1}


@pytest.mark.parametrize(
    "subject",
    [
        *("user's", "the user's", "my", "User:", "the_user", "user (me)", "self", "u\u200bser", "ana"),
        # issue 33's twenty-seventh probe: the user and theirs
        *("the user himself", "this user", "ana (me)", "me and my wife", "my wife", "ana's wife", "u s e r"),
    ],
)
def test_a_subject_naming_the_user_in_any_form_is_about_the_user(subject: str) -> None:
    # issue 33's twenty-sixth probe: each of these was published to every user of the tenant
    from mongomem.kinds.base import about_the_user

    assert about_the_user({"subject": subject, "attribute": "blood type", "value": "AB"}, "ana")
    assert about_the_user({"subject": "user", "qualifiers": {"name": "Ana"}}, "ana")
    assert not about_the_user({"subject": "user", "qualifiers": {"name": "North Dock"}}, "ana")
    assert not about_the_user({"subject": "users", "attribute": "badge rule", "value": "always"}, "ana")


def test_a_name_the_user_gives_keeps_their_facts_private() -> None:
    # "I am Zed" (any introduction) and the batch's own "user name: Zed": facts about Zed are the user's
    from mongomem.kinds.semantic import Semantic

    said = turns("I am Zed. My favourite band is Qwerty. The north dock opens at 7 am.")
    items = [
        {"subject": "user", "attribute": "name", "value": "Zed", "evidence_seqs": [1]},
        {"subject": "Zed", "attribute": "favourite band", "value": "Qwerty", "evidence_seqs": [1]},
        {"subject": "north dock", "attribute": "opening time", "value": "7 am", "evidence_seqs": [1]},
    ]
    out = screen(Semantic(), items, said, "u-1", org=True)
    assert [i["subject"] for i in out.items] == ["north dock"]
    assert out.kept_private == {"about_user": 1, "names_user": 1}


def test_a_shared_facts_value_naming_the_user_stays_theirs_a_terms_definition_does_not() -> None:
    # issue 33's twenty-eighth probe, finding 3's value case: with facts shared by the organisation, one
    # user's "the vault password: the user set it to Zorblax" was published; a term's definition saying
    # what "the user" does is how anyone's term reads and stays shared
    from mongomem.kinds.procedural import Procedural
    from mongomem.kinds.semantic import Semantic

    said = turns("The vault password: the user set it to Zorblax. The north dock opens at 7 am for users.")
    items = [
        {
            "subject": "the vault",
            "attribute": "password",
            "value": "the user set it to Zorblax",
            "evidence_seqs": [1],
        },
        {
            "subject": "north dock",
            "attribute": "opening time",
            "value": "7 am for users",
            "evidence_seqs": [1],
        },
        {
            "subject": "user",
            "attribute": "gate",
            "value": "7 am",
            "qualifiers": {"name": "North Dock"},
            "evidence_seqs": [1],
        },
    ]
    out = screen(Semantic(), items, said, "ana", org=True)
    assert [i["subject"] for i in out.items] == ["north dock", "user"]  # "users", a dock called "user"
    assert [i["subject"] for i in out.personal] == ["the vault"]
    assert Semantic().names_its_user(
        {"subject": "gate", "attribute": "code", "value": "ana's own 4411"}, "ana"
    )
    assert not Taxonomic().names_its_user({"term": "RBAC", "definition": "what the user may do"}, "ana")
    assert Taxonomic().names_its_user({"term": "user pharmacy", "definition": "the CVS on 5th"}, "ana")
    assert not Procedural().names_its_user({"name": "Reset a badge", "steps": ["ask the user for it"]}, "ana")


@pytest.mark.parametrize("text", ["I/O scheduler tuning", "i.e. the north dock", "take I-5 north"])
def test_letters_that_are_not_the_pronoun_are_not_the_first_person(text: str) -> None:
    # one rule for direct writes and extraction (kinds/base.first_person): "I/O" is no "I"
    from mongomem.kinds.base import first_person

    assert not first_person(text)
    assert first_person(f"{text}, as I said") and first_person(f"my {text}")
    assert (
        org_verdict(
            term("IOS", f"{text} for the docks"),
            turns(f"IOS means {text}."),
        )
        is None
    )


@pytest.mark.parametrize(
    "text",
    [
        *("mi médico", "meine Bank", "ma banque", "我的医生", "yo", "ich", "я", "ich spritze jeden Morgen"),
        # issue 33's thirtieth probe: other forms of the listed languages
        *(
            "내 은행",
            "제 주치의",
            "môj lekár",
            "PIN mojego konta",
            "пароль от моей почты",
            "пароль моєї пошти",
        ),
        *("legen ga meg 10 enheter", "मैंने आज 10 यूनिट इंसुलिन लिया"),
    ],
)
def test_the_first_person_of_the_listed_languages_is_read(text: str) -> None:
    # issue 33's twenty-ninth probe: these were published from one-user writes and extraction
    from mongomem.kinds.base import first_person

    assert first_person(text)
    assert org_verdict(term("PINX", text), turns(f"PINX stands for {text}.")) == "personal"


@pytest.mark.parametrize("text", ["EU customers", "MA office", "IO port", "10 min walk", "제1조", "Meg said"])
def test_abbreviations_and_names_like_a_pronoun_are_not_the_first_person(text: str) -> None:
    from mongomem.kinds.base import first_person

    assert not first_person(text)


def test_a_name_the_user_stated_or_their_ids_local_part_names_them() -> None:
    from mongomem.kinds.base import about_the_user, names_the_user
    from mongomem.kinds.semantic import Semantic

    assert names_the_user(["Dana Whitfield's doctor"], "u-1", stated={"dana whitfield"})
    assert Semantic().names_its_user(
        {
            "subject": "user",
            "attribute": "blood type",
            "value": "O-",
            "qualifiers": {"name": "Dana Whitfield"},
        },
        "u-1",
        {"Dana Whitfield"},
    )
    assert not names_the_user(["north dock"], "u-1", stated={"dana whitfield"})
    assert about_the_user({"subject": "bob.smith's locker"}, "bob.smith@acme.com")
    for said in ("el usuario", "o utilizador", "使用者", "der Benutzer"):
        assert about_the_user({"subject": said}, "u-1"), said
