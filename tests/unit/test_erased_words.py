"""Erasing a user takes out of an org memory the words only they said (issue 33, probe 5)."""

from __future__ import annotations

from mongomem.erasure import without_erased_words
from mongomem.models.memory import stated_words

TERM = {"term": "PLT", "definition": "the pallet ledger", "aliases": ["ZED-NICK", "Pallets"], "domain": "ops"}


def test_an_alias_and_a_domain_only_the_erased_user_gave_go() -> None:
    zed = stated_words(TERM)
    bob = stated_words({"term": "PLT", "definition": "the pallet ledger", "aliases": ["pallets"]})
    out = without_erased_words(TERM, [zed], [bob])
    assert out == {**TERM, "aliases": ["Pallets"], "domain": None}


def test_words_another_user_said_too_stay() -> None:
    zed = stated_words(TERM)
    carol = stated_words({**TERM, "aliases": ["zed-nick "]})
    # carol gave the nickname (other case, a space) and the domain, not "Pallets"
    assert without_erased_words(TERM, [zed], [carol]) == {**TERM, "aliases": ["ZED-NICK"]}
    assert without_erased_words(TERM, [zed], [stated_words(TERM)]) is None


def test_older_entries_without_words_change_nothing() -> None:
    bob = stated_words({"term": "PLT", "definition": "the pallet ledger"})
    assert without_erased_words(TERM, [None], [bob]) is None
    assert without_erased_words(TERM, [stated_words(TERM)], [bob, None]) is None


def test_a_domain_goes_though_another_statement_gave_another_domain() -> None:
    # Given zed's domain, carried by carol's alias, and eve's proposal of another domain
    said = {"term": "PLT", "definition": "the pallet ledger"}
    carried = {**said, "aliases": ["pallets"], "domain": "zed's private project"}
    zed = stated_words({**said, "domain": "zed's private project"})
    carol = stated_words({**said, "aliases": ["pallets"]})
    eve = stated_words({"term": "PLT", "definition": "the pallet list", "domain": "Logistics "})
    # When zed is erased, Then his domain leaves the version carol carried
    assert without_erased_words(carried, [zed], [carol, eve]) == {**carried, "domain": None}
    # and a domain eve gave too stays
    logistics = {**carried, "domain": "logistics"}
    assert (
        without_erased_words(logistics, [stated_words({**said, "domain": "logistics"})], [carol, eve]) is None
    )


def test_a_field_every_other_statement_gave_is_never_emptied() -> None:
    # Given a term every other statement named in another form (its key matched, not its letters)
    zed = stated_words({"term": "Café code", "definition": "the code of the café"})
    bob = stated_words({"term": "Cafe code", "definition": "the code of the café", "domain": "ops"})
    # When zed is erased, Then the term stays (a payload without its term is no memory)
    assert (
        without_erased_words({"term": "Café code", "definition": "the code of the café"}, [zed], [bob])
        is None
    )


FACT = {"subject": "north gate", "attribute": "night contact", "value": "the gate office"}


def test_a_mappings_texts_are_recorded_per_key() -> None:
    said = stated_words({**FACT, "qualifiers": {"note": "zed's phone", "since": "2024"}, "n": 3})
    assert said == {
        "subject": ["north gate"],
        "attribute": ["night contact"],
        "value": ["the gate office"],
        "qualifiers.note": ["zed's phone"],
        "qualifiers.since": ["2024"],
    }


def test_a_qualifier_only_the_erased_user_gave_goes() -> None:
    # Given zed's fact with two qualifiers, restated by carol with one of them
    held = {**FACT, "qualifiers": {"note": "zed's phone 555", "since": "2024"}}
    carol = stated_words({**FACT, "qualifiers": {"since": "2024 "}})
    # When zed is erased, Then his note leaves the fact, the qualifier carol gave stays
    out = without_erased_words(held, [stated_words(held)], [carol])
    assert out == {**FACT, "qualifiers": {"since": "2024"}}


def test_a_qualifier_stays_while_an_entry_that_did_not_record_mappings_backs_the_fact() -> None:
    # Given carol's entry stored before mappings were recorded (it may have said the note)
    held = {**FACT, "qualifiers": {"note": "zed's phone 555"}}
    carol = stated_words(FACT)
    # When zed is erased, Then the fact keeps its qualifiers, as before
    assert without_erased_words(held, [stated_words(held)], [carol], keyed=False) is None
