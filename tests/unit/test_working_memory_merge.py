"""Working memory logic: merge rules, modes, scopes, refusals, tool and instructions, concurrency."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from mongomem.config import ConfigError
from mongomem.errors import InvalidInput, NotFound, PayloadTooLarge
from mongomem.models.common import Principal, Scope
from mongomem.models.working_memory import ThreadCreate, Unchanged, WorkingMemoryKey, WorkingMemoryWrite
from mongomem.workingmemory.config import DEFAULT_TEMPLATE, WorkingMemoryConfig, parse_working_memory_config
from mongomem.workingmemory.errors import (
    ConcurrentUpdate,
    EmptyTemplateRefused,
    ModeMismatch,
    ReadOnly,
    SchemaMismatch,
)
from mongomem.workingmemory.merge import deep_merge, has_content, is_template, schema_errors
from mongomem.workingmemory.ports import Stored
from mongomem.workingmemory.service import WorkingMemoryService, resolve_key
from mongomem.workingmemory.tool import empty_from_schema, instructions, partial_schema, tool_spec
from tests.fakes import InMemoryWorkingMemory

PROFILE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "What the user wants to be called"},
        "age": {"type": "integer", "minimum": 0},
        "preferences": {
            "type": "object",
            "properties": {"seat": {"enum": ["aisle", "window"]}, "meal": {"type": "string"}},
            "required": ["seat"],
        },
        "airports": {"type": "array", "items": {"type": "string", "minLength": 3, "maxLength": 3}},
    },
    "required": ["name"],
}
SCHEMA_CONFIG = WorkingMemoryConfig(json_schema=PROFILE_SCHEMA)
TEMPLATE_CONFIG = WorkingMemoryConfig()


def _key(scope: str = "resource", user: str | None = None, thread: str | None = None) -> WorkingMemoryKey:
    principal = Principal(tenant="t1")
    return resolve_key(principal, scope, user or f"u-{uuid.uuid4().hex[:8]}", thread)  # type: ignore[arg-type]


def _content(text: str) -> WorkingMemoryWrite:
    return WorkingMemoryWrite(content=text)


def _data(data: dict[str, Any]) -> WorkingMemoryWrite:
    return WorkingMemoryWrite(data=data)


# -- merge rules ---------------------------------------------------------------------------------
def test_objects_merge_key_by_key_at_every_depth() -> None:
    base = {"name": "Ada", "preferences": {"seat": "aisle", "meal": "veg"}}
    merged = deep_merge(base, {"preferences": {"seat": "window"}, "age": 36})
    assert merged == {"name": "Ada", "age": 36, "preferences": {"seat": "window", "meal": "veg"}}


def test_null_deletes_a_field_at_any_depth() -> None:
    base = {"name": "Ada", "preferences": {"seat": "aisle", "meal": "veg"}}
    assert deep_merge(base, {"name": None, "preferences": {"meal": None}}) == {
        "preferences": {"seat": "aisle"}
    }
    assert deep_merge(base, {"missing": None}) == base


def test_arrays_are_replaced_whole_never_concatenated() -> None:
    assert deep_merge({"airports": ["LHR", "LIS"]}, {"airports": ["OPO"]}) == {"airports": ["OPO"]}


@pytest.mark.parametrize("stored", [None, "a markdown note", ["x"], 42])
def test_a_stored_value_that_is_not_an_object_is_replaced(stored: Any) -> None:
    assert deep_merge(stored, {"name": "Ada", "gone": None}) == {"name": "Ada"}


def test_a_nested_non_object_is_replaced_by_a_patch_object() -> None:
    assert deep_merge({"prefs": "none"}, {"prefs": {"seat": "aisle", "x": None}}) == {
        "prefs": {"seat": "aisle"}
    }


def test_merging_never_modifies_its_arguments() -> None:
    base = {"a": {"b": [1]}}
    patch = {"a": {"c": {"d": 1}}}
    merged = deep_merge(base, patch)
    merged["a"]["b"].append(2)
    merged["a"]["c"]["d"] = 2
    assert base == {"a": {"b": [1]}} and patch == {"a": {"c": {"d": 1}}}


_keys = st.sampled_from(["a", "b", "c", "d"])
_scalars = st.one_of(st.integers(-5, 5), st.text(max_size=3), st.booleans())
_json = st.recursive(
    st.one_of(st.none(), _scalars),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_keys, inner, max_size=3)),
    max_leaves=12,
)
documents = st.dictionaries(_keys, _json, max_size=4)


def _no_nulls_outside_arrays(value: Any) -> bool:
    if isinstance(value, dict):
        return all(v is not None and _no_nulls_outside_arrays(v) for v in value.values())
    return True


@settings(deadline=None)
@given(documents)
def test_merging_an_empty_patch_is_identity(doc: dict[str, Any]) -> None:
    doc = deep_merge({}, doc)  # a stored document never holds nulls outside arrays
    assert deep_merge(doc, {}) == doc


@settings(deadline=None)
@given(documents, documents)
def test_merge_properties_null_deletes_arrays_replace_and_no_null_is_stored(
    base: dict[str, Any], patch: dict[str, Any]
) -> None:
    base = deep_merge({}, base)  # stored documents hold no nulls outside arrays
    merged = deep_merge(base, patch)
    for key, value in patch.items():
        if value is None:
            assert key not in merged
        elif isinstance(value, dict):
            assert {k for k, v in value.items() if v is not None} <= merged[key].keys()
        else:
            assert merged[key] == value  # scalars and arrays replace whole
    for key in base.keys() - patch.keys():
        assert merged[key] == base[key]
    assert _no_nulls_outside_arrays(merged)


@settings(deadline=None)
@given(documents, documents)
def test_applying_the_same_patch_twice_is_the_same_as_once(
    base: dict[str, Any], patch: dict[str, Any]
) -> None:
    once = deep_merge(base, patch)
    assert deep_merge(once, patch) == once


# Associativity holds when no key changes kind between object and non-object and no patch deletes:
# keys a-c always hold objects, x-z always hold scalars or arrays.
_leaf = st.one_of(st.integers(-3, 3), st.lists(st.integers(0, 3), max_size=2))
_shaped = st.recursive(
    st.dictionaries(st.sampled_from(["x", "y", "z"]), _leaf, max_size=3),
    lambda inner: st.builds(
        lambda objs, leaves: {**objs, **leaves},
        st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=2),
        st.dictionaries(st.sampled_from(["x", "y", "z"]), _leaf, max_size=2),
    ),
    max_leaves=10,
)


@settings(deadline=None)
@given(_shaped, _shaped, _shaped)
def test_deep_merge_is_associative_for_same_shaped_null_free_patches(
    a: dict[str, Any], p: dict[str, Any], q: dict[str, Any]
) -> None:
    assert deep_merge(deep_merge(a, p), q) == deep_merge(a, deep_merge(p, q))


def test_schema_errors_name_the_failing_path() -> None:
    errors = schema_errors(
        PROFILE_SCHEMA, {"name": "Ada", "preferences": {"seat": "middle"}, "airports": ["LISBON"]}
    )
    paths = {e["path"] for e in errors}
    assert paths == {"preferences.seat", "airports.0"}
    assert schema_errors(PROFILE_SCHEMA, {"name": "Ada"}) == []
    assert schema_errors(PROFILE_SCHEMA, {})[0]["path"] == "(root)"


def test_the_template_matches_itself_despite_whitespace_and_is_not_content() -> None:
    sloppy = "\n" + "\n".join(line + "  " for line in DEFAULT_TEMPLATE.splitlines())
    assert is_template(sloppy, DEFAULT_TEMPLATE)
    assert not has_content(sloppy, DEFAULT_TEMPLATE)
    assert has_content(DEFAULT_TEMPLATE.replace("**Location**:", "**Location**: Lisbon"), DEFAULT_TEMPLATE)


# -- configuration -------------------------------------------------------------------------------
def test_the_default_is_resource_scoped_template_mode_with_a_profile_template() -> None:
    config = WorkingMemoryConfig()
    assert (config.mode, config.scope) == ("template", "resource")
    for section in ("Name", "Location", "Occupation", "Interests", "Goals", "Events", "Facts"):
        assert section in config.effective_template


def test_configuring_both_a_template_and_a_schema_is_a_configuration_error() -> None:
    with pytest.raises(ConfigError, match="either a template or a schema"):
        parse_working_memory_config({"template": "# Notes", "schema": PROFILE_SCHEMA})


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "array"}, "must describe an object"),
        ({"type": "object", "required": "name"}, "not a valid JSON Schema"),
    ],
)
def test_an_unusable_schema_is_a_configuration_error(schema: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        WorkingMemoryConfig(json_schema=schema)


def test_the_root_reads_the_config_from_the_project_config_defaults_and_can_be_replaced() -> None:
    from mongomem.config import parse_project_config, settings_from_env
    from mongomem.runtime import Services

    project = parse_project_config({"memory": {"working_memory": {"schema": PROFILE_SCHEMA}}})
    assert Services(settings_from_env({}, project=project)).working_memory_config.mode == "schema"
    assert Services(settings_from_env({})).working_memory_config == WorkingMemoryConfig()
    replaced = Services(settings_from_env({}), working_memory_config=SCHEMA_CONFIG)
    assert replaced.working_memory_config.mode == "schema"


# -- scope keys ----------------------------------------------------------------------------------
def test_resource_scope_without_a_user_is_a_clear_error() -> None:
    with pytest.raises(InvalidInput, match="resource-scoped working memory needs a user") as info:
        resolve_key(Principal(tenant="t1"), "resource", None, "thread-1")
    assert info.value.details["path"] == "user_id"


def test_thread_scope_needs_a_thread_id_and_a_service_account_is_its_own_user() -> None:
    with pytest.raises(InvalidInput, match="needs thread_id"):
        resolve_key(Principal(tenant="t1"), "thread", "u1", None)
    key = resolve_key(Principal(tenant="t1", fixed_user_id="svc"), "resource", "someone-else", "ignored")
    assert (key.user_id, key.thread_id) == ("svc", None)


# -- template mode -------------------------------------------------------------------------------
def test_template_mode_replaces_the_whole_text_on_put_and_patch() -> None:
    service, key = WorkingMemoryService(InMemoryWorkingMemory(), TEMPLATE_CONFIG), _key()
    service.replace(key, _content("# User\n- Name: Ada\n- Location: Lisbon"))
    state = service.merge(key, _content("# User\n- Name: Ada"))
    assert state.content == "# User\n- Name: Ada" and state.version == 2


def test_an_empty_template_over_existing_content_is_refused_and_nothing_changes() -> None:
    store = InMemoryWorkingMemory()
    service, key = WorkingMemoryService(store, TEMPLATE_CONFIG), _key()
    service.replace(key, _content("- **Location**: Lisbon"))
    with pytest.raises(EmptyTemplateRefused):
        service.merge(key, _content(DEFAULT_TEMPLATE + "\n\n"))
    with pytest.raises(EmptyTemplateRefused):
        service.replace(key, _content("  \n"))
    assert service.get(key).content == "- **Location**: Lisbon" and store.saves == 1


def test_the_empty_template_is_accepted_when_nothing_is_stored_and_delete_clears() -> None:
    service, key = WorkingMemoryService(InMemoryWorkingMemory(), TEMPLATE_CONFIG), _key()
    assert service.replace(key, _content(DEFAULT_TEMPLATE)).content == DEFAULT_TEMPLATE
    service.replace(key, _content("- Name: Ada"))
    assert service.clear(key).content is None
    assert service.replace(key, _content(DEFAULT_TEMPLATE)).content == DEFAULT_TEMPLATE


def test_sending_schema_data_in_template_mode_is_refused() -> None:
    with pytest.raises(ModeMismatch, match="template mode"):
        WorkingMemoryService(InMemoryWorkingMemory(), TEMPLATE_CONFIG).replace(_key(), _data({"name": "Ada"}))


# -- schema mode ---------------------------------------------------------------------------------
def test_schema_mode_patch_merges_deletes_and_replaces_arrays() -> None:
    service, key = WorkingMemoryService(InMemoryWorkingMemory(), SCHEMA_CONFIG), _key()
    service.replace(key, _data({"name": "Ada", "age": 36, "airports": ["LHR", "LIS"]}))
    state = service.merge(key, _data({"age": None, "airports": ["OPO"], "preferences": {"seat": "aisle"}}))
    assert state.data == {"name": "Ada", "airports": ["OPO"], "preferences": {"seat": "aisle"}}


def test_an_invalid_merge_is_refused_with_the_failing_path_and_nothing_changes() -> None:
    service, key = WorkingMemoryService(InMemoryWorkingMemory(), SCHEMA_CONFIG), _key()
    service.replace(key, _data({"name": "Ada", "preferences": {"seat": "aisle"}}))
    with pytest.raises(SchemaMismatch) as info:
        service.merge(key, _data({"preferences": {"seat": "middle"}}))
    assert info.value.details["path"] == "preferences.seat"
    with pytest.raises(SchemaMismatch) as info:
        service.merge(key, _data({"name": None}))  # deleting a required field
    assert info.value.details["path"] == "(root)"
    assert service.get(key).data == {"name": "Ada", "preferences": {"seat": "aisle"}}


def test_put_in_schema_mode_replaces_the_whole_document_after_validation() -> None:
    service, key = WorkingMemoryService(InMemoryWorkingMemory(), SCHEMA_CONFIG), _key()
    service.replace(key, _data({"name": "Ada", "age": 36}))
    assert service.replace(key, _data({"name": "Grace"})).data == {"name": "Grace"}
    with pytest.raises(SchemaMismatch):
        service.replace(key, _data({"age": 1}))


def test_tool_arguments_are_accepted_verbatim_even_as_a_json_string() -> None:
    service, key = WorkingMemoryService(InMemoryWorkingMemory(), SCHEMA_CONFIG), _key()
    service.replace(key, _data({"name": "Ada"}))
    state = service.merge(key, WorkingMemoryWrite(memory='{"age": 36}'))
    assert state.data == {"name": "Ada", "age": 36}


def test_keys_mongodb_would_read_as_operators_are_refused_even_inside_a_json_string() -> None:
    service = WorkingMemoryService(InMemoryWorkingMemory(), SCHEMA_CONFIG)
    with pytest.raises(InvalidInput, match="key"):
        service.merge(_key(), WorkingMemoryWrite(memory='{"name": "Ada", "x": {"$set": 1}}'))


def test_a_merge_over_text_left_from_template_mode_replaces_it() -> None:
    store = InMemoryWorkingMemory()
    key = _key()
    WorkingMemoryService(store, TEMPLATE_CONFIG).replace(key, _content("# notes"))
    schema_service = WorkingMemoryService(store, SCHEMA_CONFIG)
    assert schema_service.get(key).content == "# notes"
    assert schema_service.merge(key, _data({"name": "Ada"})).data == {"name": "Ada"}


def test_working_memory_larger_than_the_limit_is_refused() -> None:
    service = WorkingMemoryService(InMemoryWorkingMemory(), WorkingMemoryConfig(max_bytes=256))
    with pytest.raises(PayloadTooLarge):
        service.replace(_key(), _content("x" * 300))


# -- scopes, read-only, threads ------------------------------------------------------------------
def test_resource_and_thread_scopes_do_not_see_each_other() -> None:
    service, user = (
        WorkingMemoryService(InMemoryWorkingMemory(), TEMPLATE_CONFIG),
        f"u-{uuid.uuid4().hex[:8]}",
    )
    service.replace(_key("resource", user), _content("- Name: Ada"))
    service.replace(_key("thread", user, "th-1"), _content("- Topic: flights"))
    assert service.get(_key("thread", user, "th-2")).content is None
    assert service.get(_key("thread", user, "th-1")).content == "- Topic: flights"
    assert service.get(_key("resource", user, "th-1")).content == "- Name: Ada"
    assert service.get(_key("resource")).content is None  # another user


def test_read_only_requests_read_but_every_write_is_refused() -> None:
    store = InMemoryWorkingMemory()
    service, key = WorkingMemoryService(store, SCHEMA_CONFIG), _key()
    service.replace(key, _data({"name": "Ada"}))
    for write in (service.replace, service.merge):
        with pytest.raises(ReadOnly):
            write(key, _data({"name": "Grace"}), read_only=True)
    with pytest.raises(ReadOnly):
        service.clear(key, read_only=True)
    state = service.get(key, read_only=True)
    assert (state.data, state.read_only, store.saves) == ({"name": "Ada"}, True, 1)


def test_a_thread_seed_is_validated_and_becomes_its_working_memory() -> None:
    service = WorkingMemoryService(InMemoryWorkingMemory(), SCHEMA_CONFIG)
    scope = Scope(tenant="t1", user_id="u1")
    with pytest.raises(SchemaMismatch):
        service.create_thread(scope, ThreadCreate(thread_id="th", metadata={"workingMemory": {"age": 3}}))
    service.create_thread(scope, ThreadCreate(thread_id="th", metadata={"workingMemory": {"name": "Ada"}}))
    assert service.get(_key("thread", "u1", "th")).data == {"name": "Ada"}
    assert service.get_thread(scope, "th").metadata == {"workingMemory": {"name": "Ada"}}
    with pytest.raises(NotFound):
        service.get_thread(scope, "other")


def test_disabled_working_memory_answers_not_found() -> None:
    with pytest.raises(NotFound, match="not enabled"):
        WorkingMemoryService(InMemoryWorkingMemory(), WorkingMemoryConfig(enabled=False)).get(_key())


# -- tool, instructions, delivery ----------------------------------------------------------------
def test_template_tool_takes_the_whole_markdown_as_memory() -> None:
    spec = tool_spec(TEMPLATE_CONFIG, "system")
    assert spec.name == "updateWorkingMemory"
    assert spec.input_schema["properties"]["memory"]["type"] == "string"
    assert spec.input_schema["required"] == ["memory"]


def test_schema_tool_accepts_partial_and_null_updates_but_the_merged_result_is_strict() -> None:
    spec = tool_spec(SCHEMA_CONFIG, "system")
    validator = Draft202012Validator(spec.input_schema)
    assert validator.is_valid({"memory": {"age": 3}})  # "name" is required only in the stored document
    assert validator.is_valid({"memory": {"name": None, "preferences": {"meal": "veg"}}})
    assert not validator.is_valid({"memory": {"preferences": {"seat": "middle"}}})
    assert not validator.is_valid({"memory": {"airports": [None]}})  # array items stay complete
    assert PROFILE_SCHEMA["required"] == ["name"]  # the configured schema is untouched


def test_schema_definitions_move_to_the_tool_schema_root_so_refs_resolve() -> None:
    schema = {
        "type": "object",
        "$defs": {"city": {"type": "string"}},
        "properties": {"home": {"$ref": "#/$defs/city"}},
    }
    spec = tool_spec(WorkingMemoryConfig(json_schema=schema), "system")
    validator = Draft202012Validator(spec.input_schema)
    assert validator.is_valid({"memory": {"home": "Lisbon"}}) and not validator.is_valid(
        {"memory": {"home": 1}}
    )
    assert partial_schema(schema)["properties"]["home"]["anyOf"][1] == {"type": "null"}


def test_the_empty_object_derived_from_a_schema_lists_every_field() -> None:
    assert empty_from_schema(PROFILE_SCHEMA) == {
        "name": None,
        "age": None,
        "preferences": {"seat": None, "meal": None},
        "airports": [],
    }


def test_system_instructions_show_the_template_and_the_current_data() -> None:
    text = instructions(SCHEMA_CONFIG, {"name": "Ada"}, "system", read_only=False)
    assert "updateWorkingMemory" in text and '"airports": []' in text and '"name": "Ada"' in text
    text = instructions(TEMPLATE_CONFIG, "- Name: Ada", "system", read_only=False)
    assert "**Occupation**" in text and "<working_memory_data>\n- Name: Ada\n</working_memory_data>" in text


def test_read_only_context_has_no_tool_and_says_so() -> None:
    service, key = WorkingMemoryService(InMemoryWorkingMemory(), TEMPLATE_CONFIG), _key()
    context = service.context(key, read_only=True)
    assert not isinstance(context, Unchanged)
    assert context.tool is None and "READ-ONLY" in context.instructions


def test_state_delivery_sends_the_data_as_a_signal_and_skips_an_unchanged_snapshot() -> None:
    service, key = WorkingMemoryService(InMemoryWorkingMemory(), SCHEMA_CONFIG), _key()
    service.replace(key, _data({"name": "Ada"}))
    context = service.context(key, delivery="state")
    assert not isinstance(context, Unchanged) and context.state is not None and context.tool is not None
    assert (context.tool.name, context.state.stateId, context.state.data) == (
        "setWorkingMemory",
        "working-memory",
        {"name": "Ada"},
    )
    assert '"name": "Ada"' not in context.instructions  # the data travels in the state, not the text
    assert service.context(key, delivery="state", if_none_match=context.cache_key) == Unchanged(
        cache_key=context.cache_key
    )
    service.merge(key, _data({"age": 36}))
    changed = service.context(key, delivery="state", if_none_match=context.cache_key)
    assert not isinstance(changed, Unchanged) and changed.cache_key != context.cache_key


# -- concurrency ---------------------------------------------------------------------------------
def test_two_writers_patching_different_fields_fifty_times_each_both_survive() -> None:
    schema = {"type": "object", "additionalProperties": {"type": "integer"}}
    store = InMemoryWorkingMemory(load_delay=0.0005)
    service, key = (
        WorkingMemoryService(store, WorkingMemoryConfig(json_schema=schema), max_attempts=500),
        _key(),
    )
    errors: list[BaseException] = []

    def writer(field: str) -> None:
        try:
            for i in range(1, 51):
                service.merge(key, _data({field: i, f"{field}-{i}": i}))
        except BaseException as exc:  # surfaced below; a thread's exception is otherwise lost
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(f,)) for f in ("left", "right")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    state = service.get(key)
    # A lost update would drop one of the 100 per-write fields.
    expected = {f"{side}-{i}": i for side in ("left", "right") for i in range(1, 51)}
    assert state.data == {"left": 50, "right": 50, **expected} and state.version == 100
    assert store.lost_races > 0  # the writers really did collide and retry


class _AlwaysLoses(InMemoryWorkingMemory):
    def save(self, key: WorkingMemoryKey, value: Any, expected_version: int) -> Stored | None:
        return None


def test_a_writer_that_keeps_losing_gives_up_with_a_retryable_conflict() -> None:
    service = WorkingMemoryService(_AlwaysLoses(), TEMPLATE_CONFIG, max_attempts=3)
    with pytest.raises(ConcurrentUpdate):
        service.replace(_key(), _content("x"))
