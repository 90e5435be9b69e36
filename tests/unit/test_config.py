"""project-config.yaml and environment settings: bad fields are named with their path."""

from __future__ import annotations

from pathlib import Path

import pytest

from mongomem.config import (
    ConfigError,
    load_project_config,
    parse_project_config,
    settings_from_env,
)
from mongomem.kindnames import BuiltinKind


def test_defaults_enable_every_type() -> None:
    cfg = parse_project_config({})
    assert cfg.memory.extraction.enabled == list(BuiltinKind)
    assert (cfg.memory.snapshot.max_messages, cfg.memory.snapshot.idle_seconds) == (50, 900)
    assert cfg.memory.limits.max_content_bytes == 1024 * 1024  # tool results are often large


def test_every_bad_field_is_named_with_its_path() -> None:
    with pytest.raises(ConfigError) as err:
        parse_project_config(
            {
                "memory": {
                    "snapshot": {"max_messages": 0, "idle_seconds": "soon"},
                    "extraction": {"enabled": ["semantic", "gossip"]},
                    "colour": 1,
                }
            }
        )
    text = str(err.value)
    for path in (
        "memory.snapshot.max_messages",
        "memory.snapshot.idle_seconds",
        "memory.extraction.enabled",
        "memory.colour",
    ):
        assert path in text
    assert "'gossip'" in text


def test_yaml_file_is_read_and_broken_yaml_is_a_clear_error(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("memory:\n  extraction:\n    enabled: [semantic]\n")
    assert load_project_config(good).memory.extraction.enabled == [BuiltinKind.semantic]
    bad = tmp_path / "bad.yaml"
    bad.write_text("memory: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_project_config(bad)


def test_the_environment_gives_the_enabled_kinds_until_the_project_config_names_them(tmp_path: Path) -> None:
    # Given a deployment default (the template's EnabledExtractions) and a config that names no list
    quiet = tmp_path / "quiet.yaml"
    quiet.write_text("memory:\n  snapshot:\n    max_messages: 10\n")
    env = {"MONGOMEM_CONFIG_FILE": str(quiet), "MONGOMEM_ENABLED_EXTRACTIONS": "procedural"}
    assert settings_from_env(env).enabled_extractions == [BuiltinKind.procedural]
    # When the applied project config names the kinds, its choice wins (`memory apply` changes them)
    named = tmp_path / "named.yaml"
    named.write_text("memory:\n  extraction:\n    enabled: [semantic, episodic]\n")
    env["MONGOMEM_CONFIG_FILE"] = str(named)
    assert settings_from_env(env).enabled_extractions == [BuiltinKind.semantic, BuiltinKind.episodic]
    assert settings_from_env({"MONGOMEM_ENABLED_EXTRACTIONS": ""}).enabled_extractions == []


def test_unknown_type_in_the_environment_is_named() -> None:
    with pytest.raises(ConfigError, match="'semantik'"):
        settings_from_env({"MONGOMEM_ENABLED_EXTRACTIONS": "semantic,semantik"})


def test_in_lambda_is_read_from_the_variable_the_lambda_runtime_sets() -> None:
    assert settings_from_env({"AWS_LAMBDA_FUNCTION_NAME": "mongomem-record"}).in_lambda is True
    assert settings_from_env({}).in_lambda is False


def test_the_write_concern_is_a_setting_with_a_documented_default() -> None:
    assert settings_from_env({}).write_concern == "auto"
    assert settings_from_env({"MONGOMEM_WRITE_CONCERN": "majority"}).write_concern == "majority"
    with pytest.raises(ConfigError) as err:
        settings_from_env({"MONGOMEM_WRITE_CONCERN": "fire-and-forget"})
    assert "MONGOMEM_WRITE_CONCERN: " in str(err.value)


def test_a_config_error_reads_as_one_line() -> None:
    with pytest.raises(ConfigError) as err:
        parse_project_config({"memory": {"snapshot": {"max_messages": "lots", "colour": "red"}}})
    line = err.value.one_line()
    assert "\n" not in line and "memory.snapshot.max_messages" in line and "memory.snapshot.colour" in line


def test_with_rules_is_a_setting_of_extraction_not_a_kind() -> None:
    assert parse_project_config({}).memory.extraction.with_rules is False
    cfg = parse_project_config(
        {"memory": {"extraction": {"with_rules": True, "semantic": {"roles": ["user"]}}}}
    )
    assert cfg.memory.extraction.with_rules is True and list(cfg.memory.extraction.kinds) == ["semantic"]
    with pytest.raises(ConfigError) as err:
        parse_project_config({"memory": {"extraction": {"with_rule": True}}})
    assert "memory.extraction.with_rule" in str(err.value) and "`with_rules`" in str(err.value)
