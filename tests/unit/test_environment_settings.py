"""The environment: every variable the runtime reads is a field of EnvironmentSettings, every field is
documented, and a bad value is refused naming its variable (docs/operations.md "Environment variables")."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mongomem.config import ConfigError, EnvironmentSettings, Settings, settings_from_env
from mongomem.runtime import Runtime, process
from tests.conftest import ROOT

VARIABLE = re.compile(r"MONGOMEM_[A-Z0-9_]*")
# Named in code but not fields (each documented under the table): the prefix itself, and the per-queue
# URL variables (MONGOMEM_QUEUE_URL_<QUEUE>, one per queue the kind registry names).
PATTERNS = {"MONGOMEM_", "MONGOMEM_QUEUE_URL_"}
# Read by the CLI, the MCP server and the SDKs, never by a function.
CLIENTS = {
    "MONGOMEM_URL",
    "MONGOMEM_API_KEY",
    "MONGOMEM_DATA_DIR",
    "MONGOMEM_PORT",
    "MONGOMEM_STACK",
    "MONGOMEM_MCP_TOKEN",
}
# Read by the development tools (tools/, the Makefile, tests).
TOOLS = {
    "MONGOMEM_OPENSEARCH_HOME",
    "MONGOMEM_OPENSEARCH_FORCE",
    "MONGOMEM_LLAMA_CACHE",
    "MONGOMEM_MODEL_CACHE",
    "MONGOMEM_LLM_CONTRACT",
    "MONGOMEM_LLM_CONTRACT_MODEL",
}


def fields() -> set[str]:
    return {EnvironmentSettings.variable(f) for f in EnvironmentSettings.model_fields}


def named_in(*folders: str) -> dict[str, list[str]]:
    """Each MONGOMEM_* name in the Python files under `folders`, with the files naming it."""
    found: dict[str, list[str]] = {}
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for name in set(VARIABLE.findall(path.read_text(encoding="utf-8"))):
                found.setdefault(name, []).append(str(path.relative_to(ROOT)))
    return found


# A variable read straight from a mapping: env.get("MONGOMEM_X"...), env["MONGOMEM_X"] (not an assignment).
DIRECT_READ = re.compile(r'(?:\.get\(\s*|\[\s*)"(MONGOMEM_[A-Z0-9_]+)"\s*(?:[,)]|\](?!\s*=[^=]))')


def read_directly(*folders: str) -> dict[str, list[str]]:
    """Each runtime variable read straight from a mapping (not through EnvironmentSettings), by file."""
    found: dict[str, list[str]] = {}
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.parent.name == "config" and path.parent.parent.name == "mongomem":
                continue  # mongomem.config: EnvironmentSettings itself, and the per-queue URLs
            for name in set(DIRECT_READ.findall(path.read_text(encoding="utf-8"))) - CLIENTS - TOOLS:
                found.setdefault(name, []).append(str(path.relative_to(ROOT)))
    return found


def template_variables() -> set[str]:
    from twin.cfn import load_template

    template = load_template(ROOT / "template.yaml")
    blocks = [template["Globals"]["Function"]]
    blocks += [
        r.get("Properties", {})
        for r in template["Resources"].values()
        if r["Type"] == "AWS::Serverless::Function"
    ]
    return {name for b in blocks for name in (b.get("Environment") or {}).get("Variables", {})}


def documented() -> tuple[dict[str, str], str]:
    """The rows of docs/operations.md's table (variable -> row), and the section's whole text."""
    text = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    section = text.split("\n## Environment variables\n", 1)[1].split("\n## ", 1)[0]
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `([A-Z0-9_]+)` \|.*$", section, re.M)}
    return rows, section


def test_every_variable_the_runtime_reads_is_a_field() -> None:
    # layers/ and functions/ are what a deployed function runs; the template says what it is given
    read = named_in("layers", "functions")
    strays = {name: files for name, files in read.items() if name not in fields() | PATTERNS}
    assert strays == {}, "add these to EnvironmentSettings (mongomem.config)"
    assert read_directly("layers", "functions") == {}, "read the environment through EnvironmentSettings"
    given = {name for name in template_variables() if not name.startswith("POWERTOOLS_")}
    assert given - fields() == set(), "template.yaml sets variables no function reads"
    assert "MONGOMEM_DB_NAME" in given and "MONGOMEM_EXTRACTION_TYPE" in given  # the walk found both blocks


def test_the_sdk_tools_and_benches_name_only_fields_or_documented_exceptions() -> None:
    named = named_in("sdk/mongomem", "bench", "tools")
    strays = {
        name: files for name, files in named.items() if name not in fields() | PATTERNS | CLIENTS | TOOLS
    }
    assert strays == {}, (
        "a runtime variable belongs in EnvironmentSettings, another in docs/operations.md's list"
    )
    assert read_directly("sdk/mongomem", "tools") == {}, "read the environment through EnvironmentSettings"
    # the clients' variables stay the clients': no function reads them
    assert set(named_in("layers", "functions")) & CLIENTS == set()


def test_every_field_is_documented_with_its_default_and_nothing_else_is_in_the_table() -> None:
    rows, section = documented()
    assert set(rows) == fields()
    for field in EnvironmentSettings.model_fields:
        default = Settings.model_fields[field].default if field in Settings.model_fields else None
        if isinstance(default, str | int) and not isinstance(default, bool):
            assert f"`{default}`" in rows[EnvironmentSettings.variable(field)], field
    for name in CLIENTS | TOOLS | {"MONGOMEM_QUEUE_URL_<QUEUE>"}:
        assert f"`{name}`" in section


def test_a_bad_variable_is_refused_naming_it_with_every_other_bad_one() -> None:
    env = {
        "MONGOMEM_LEASE_SECONDS": "2",
        "MONGOMEM_MONGO_MAX_POOL_SIZE": "lots",
        "MONGOMEM_OPENSEARCH_AUTH": "sigv4",
        "MONGOMEM_ENSURE_INDEXES": "maybe",
        "MONGOMEM_EMBEDDING_DIM": "4",
        "MONGOMEM_EXTRACTION_TYPE": "semantik",
        "MONGOMEM_DB_NAME": "fine",
    }
    with pytest.raises(ConfigError) as err:
        settings_from_env(env)
    message = str(err.value)
    assert message.startswith("invalid configuration in environment:")
    for name in env.keys() - {"MONGOMEM_DB_NAME"}:
        assert f"  {name}: " in message, name
    assert "MONGOMEM_DB_NAME" not in message
    assert "MONGOMEM_LEASE_SECONDS: Input should be greater than or equal to 5" in message


def test_an_unknown_kind_in_the_enabled_list_names_the_variable() -> None:
    with pytest.raises(
        ConfigError, match=r"MONGOMEM_ENABLED_EXTRACTIONS: unknown memory type\(s\) 'semantik'"
    ):
        settings_from_env({"MONGOMEM_ENABLED_EXTRACTIONS": "semantic, semantik"})


def test_the_enabled_list_may_name_a_custom_type_the_project_declares() -> None:
    from tests.unit.test_custom_types import TICKET, config

    settings = settings_from_env({"MONGOMEM_ENABLED_EXTRACTIONS": "ticket,semantic"}, project=config(TICKET))
    assert settings.enabled_extractions == ["ticket", "semantic"]
    with pytest.raises(ConfigError, match=r"MONGOMEM_ENABLED_EXTRACTIONS: unknown memory type.*'ticket'"):
        settings_from_env({"MONGOMEM_ENABLED_EXTRACTIONS": "ticket"})


def test_a_blank_variable_is_unset_but_a_blank_kind_list_is_no_kind() -> None:
    blank = {
        "MONGOMEM_DB_NAME": "",
        "MONGOMEM_LEASE_SECONDS": "  ",
        "MONGOMEM_ENSURE_INDEXES": "",
        "MONGOMEM_LLM_BASE_URL": "",
        "AWS_LAMBDA_FUNCTION_NAME": "",
    }
    settings = settings_from_env(blank)
    assert (settings.db_name, settings.lease_seconds, settings.ensure_indexes, settings.in_lambda) == (
        "mongomem",
        120,
        True,
        False,
    )
    assert settings.default_llm.base_url is None
    assert settings_from_env({"MONGOMEM_ENABLED_EXTRACTIONS": ""}).enabled_extractions == []
    assert settings_from_env({"MONGOMEM_SCAN_BATCH": " 7 "}).scan_batch == 7  # spaces around are dropped


@pytest.mark.parametrize(
    ("word", "meaning"),
    [("1", True), ("true", True), ("Yes", True), ("ON", True), ("0", False), ("false", False), ("No", False)],
)
def test_a_flag_reads_yes_or_no_in_any_case(word: str, meaning: bool) -> None:
    local = settings_from_env({"MONGOMEM_ENSURE_INDEXES": word})
    deployed = settings_from_env({"AWS_LAMBDA_FUNCTION_NAME": "f", "MONGOMEM_ALLOW_DEMO_PROVIDERS": word})
    assert (local.ensure_indexes, deployed.allow_demo_providers) == (meaning, meaning)


def test_unset_flags_and_the_pool_follow_where_the_process_runs() -> None:
    local, deployed = settings_from_env({}), settings_from_env({"AWS_LAMBDA_FUNCTION_NAME": "f"})
    assert (local.ensure_indexes, local.allow_demo_providers, local.mongo_max_pool_size) == (True, True, 100)
    assert (deployed.ensure_indexes, deployed.allow_demo_providers, deployed.mongo_max_pool_size) == (
        False,
        False,
        4,
    )


def test_the_lambda_runtimes_variables_are_read_by_their_own_names_and_names_in_any_case() -> None:
    settings = settings_from_env(
        {
            "AWS_LAMBDA_FUNCTION_NAME": "mongomem-record",
            "AWS_REGION": "eu-west-1",
            "mongomem_db_name": "lower",
        }
    )
    assert (settings.function_name, settings.in_lambda, settings.aws_region) == (
        "mongomem-record",
        True,
        "eu-west-1",
    )
    assert settings.db_name == "lower"
    # the aliased fields are not also read with the prefix
    assert settings_from_env({"MONGOMEM_AWS_REGION": "us-east-1"}).aws_region is None


def test_settings_read_the_environment_they_are_given_never_the_process_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MONGOMEM_DB_NAME", "from-the-process")
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "mongomem-record")
    given = EnvironmentSettings.from_mapping({"MONGOMEM_SCAN_BATCH": "7"})
    assert (given.db_name, given.function_name, given.scan_batch) == (None, None, 7)


def test_a_function_reports_the_config_file_it_read_from_the_environment_it_was_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # services another test installed for the process (configure()) would serve instead of this Runtime's
    monkeypatch.setattr(process, "_installed", None)
    config = tmp_path / "project-config.yaml"
    config.write_text("memory: {}\n")
    built: list[Any] = []

    def build(settings: Settings) -> Any:
        built.append(settings)
        return SimpleNamespace(settings=settings)

    runtime = Runtime(environ={"MONGOMEM_CONFIG_FILE": str(config)}, build=build)
    runtime.services()
    assert runtime.config_report()["source"] == str(config)
    assert built[0].config_source == "file"
    assert Runtime(environ={}, build=build).services() and built[1].config_file is None


def test_the_cli_opens_the_database_the_functions_would_with_a_blank_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `mongomem keys create` on the local stack: a blank MONGOMEM_DB_NAME is the default database, as for
    # the functions (it was the database named "")
    from mongomem.cli.ops import _db_name

    monkeypatch.setenv("MONGOMEM_DB_NAME", "")
    assert _db_name() == "mongomem"
    monkeypatch.setenv("MONGOMEM_DB_NAME", "team")
    assert _db_name() == "team"
