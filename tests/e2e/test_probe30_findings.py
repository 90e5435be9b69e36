r"""Issue 33's thirtieth independent probe (h-probe30, on main 19988e1), over HTTP on a running local stack
(tests/e2e/probe_stack.py) whose project config makes semantic facts org-wide (terms and procedures are org
by default); finding 1's extraction test starts a stack of its own (test_probe30_extraction.py: terms
extracted by the offline rules). All of issue 33's classes were in scope; the payloads are none of the
earlier probes' (test_probe_findings.py ... test_probe29_findings.py). Each finding's test fails on 19988e1
for the reason given (seen with `--runxfail`) and is marked `xfail(strict=True)`.

FINDINGS. "<own>" is a test's unique suffix; "bob", "eve" are one-user service-account keys; "the tenant
key" is the tenant-wide memory_service key.

(filled in below)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.probe_stack import Stack, answering_stack, call, config, filled, unique, write

USERS = ("alice", "bob", "eve", "frank", "ivan")
CONFIG = config(org=("semantic",))


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    yield from answering_stack(tmp_path_factory.mktemp("probe30-findings"), USERS, CONFIG)


def _listed(stack: Stack, user: str, kind: str) -> list[dict[str, Any]]:
    status, page = call(stack, stack.users[user], "GET", f"/v1/memories?type={kind}&limit=200")
    assert status == 200, page
    return [m for m in page["memories"] if m["status"] == "active"]


# -- 1. the first person and "user" of the listed languages, in the forms the word list lacks (HIGH) -----
LISTED_LANGUAGES = {
    "Korean 'nae' (my)": (
        "semantic",
        {"subject": "내 은행 {own}", "attribute": "비밀번호", "value": "4711 {own}"},
    ),
    "Korean 'je' (my, polite)": (
        "semantic",
        {"subject": "제 주치의 {own}", "attribute": "진단", "value": "당뇨병 {own}"},
    ),
    "Arabic possessive suffix (my doctor)": (
        "semantic",
        {"subject": "طبيبي {own}", "attribute": "التشخيص", "value": "السكري {own}"},
    ),
    "Turkish possessive suffix (my doctor)": (
        "semantic",
        {"subject": "doktorum {own}", "attribute": "teşhis", "value": "diyabet {own}"},
    ),
    "Swedish 'min' (my)": (
        "semantic",
        {"subject": "min läkare {own}", "attribute": "diagnos", "value": "diabetes typ 2 {own}"},
    ),
    "Danish 'min' (my)": (
        "semantic",
        {"subject": "min bank {own}", "attribute": "pinkode", "value": "4711 {own}"},
    ),
    "Norwegian 'meg' (me) in the value": (
        "semantic",
        {"subject": "insulin {own}", "attribute": "dose", "value": "legen ga meg 10 enheter hver morgen {own}"},
    ),
    "Slovak 'moj' (my)": (
        "semantic",
        {"subject": "môj lekár {own}", "attribute": "diagnóza", "value": "cukrovka {own}"},
    ),
    "Polish 'mojego' (of my)": (
        "semantic",
        {"subject": "PIN mojego konta {own}", "attribute": "wartość", "value": "4711 {own}"},
    ),
    "Russian 'moey' (of my)": (
        "semantic",
        {"subject": "пароль от моей почты {own}", "attribute": "значение", "value": "Zorblax {own}"},
    ),
    "Ukrainian 'moyeyi' (of my)": (
        "semantic",
        {"subject": "пароль моєї пошти {own}", "attribute": "значення", "value": "Zorblax {own}"},
    ),
    "Hindi 'maine' (I, ergative) in the value": (
        "semantic",
        {"subject": "इंसुलिन {own}", "attribute": "खुराक", "value": "मैंने आज 10 यूनिट इंसुलिन लिया {own}"},
    ),
    "Portuguese 'utilizador' (user)": (
        "semantic",
        {"subject": "o utilizador {own}", "attribute": "palavra-passe", "value": "Zorblax {own}"},
    ),
    "Chinese 'shiyongzhe' (user)": (
        "semantic",
        {"subject": "使用者 {own}", "attribute": "密碼", "value": "Zorblax {own}"},
    ),
    "Arabic 'al-mustakhdim' (the user)": (
        "semantic",
        {"subject": "المستخدم {own}", "attribute": "كلمة المرور", "value": "Zorblax {own}"},
    ),
    "Hindi 'upyogkarta' (user)": (
        "semantic",
        {"subject": "उपयोगकर्ता {own}", "attribute": "पासवर्ड", "value": "Zorblax {own}"},
    ),
    "Korean term (org by default) 'nae' in the definition": (
        "taxonomic",
        {"term": "NAEPIN{own}", "definition": "내 계좌의 PIN 번호는 4711 {own}"},
    ),
}


@pytest.mark.xfail(
    strict=True,
    reason="kinds/base.py::_FIRST_PERSON and _USER_WORD lack these forms of the listed languages",
)
@pytest.mark.parametrize(("kind", "payload"), LISTED_LANGUAGES.values(), ids=LISTED_LANGUAGES.keys())
def test_a_one_user_write_in_the_first_person_of_a_listed_language_stays_private(
    stack: Stack, kind: str, payload: dict[str, Any]
) -> None:
    """HIGH (one user's facts served to every user of the tenant). Bob's one-user POST /v1/memories with no
    `visibility` {"type": "semantic", "payload": {"subject": "내 은행 <own>", "attribute": "비밀번호",
    "value": "4711 <own>"}} ("my bank", "password"; or "제 주치의", "طبيبي", "doktorum", "min läkare", "min
    bank", "môj lekár", "PIN mojego konta", "пароль от моей почты", "пароль моєї пошти", "o utilizador",
    "使用者", "المستخدم", "उपयोगकर्ता"; a value "legen ga meg ...", "मैंने आज ..."; a term, org by default,
    defined "내 계좌의 PIN 번호는 4711") -> 201 ADD, visibility "org"; eve lists it."""
    own = unique()
    body = filled(payload, own)
    status, written = write(stack, stack.users["bob"], kind, body)
    assert status == 201, written
    seen = [m for m in _listed(stack, "eve", kind) if own in json.dumps(m["payload"], ensure_ascii=False)]
    assert (written["memory"]["visibility"], seen) == ("private", []), (written["memory"]["visibility"], seen)
