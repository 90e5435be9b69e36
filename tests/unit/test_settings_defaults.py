"""Every setting has one declaration and one default (docs/adr/0058-one-declaration-per-setting.md): a
variable reads its Settings field with that field's own type and bounds and no default of its own, and
the code that builds Settings from the environment fills in no value of its own."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Annotated, Any

import pytest

from mongomem.config import (
    EmbeddingProviderConfig,
    EnvironmentSettings,
    LLMProviderConfig,
    Settings,
    settings_from_env,
)
from mongomem.config.settings import FROM_ENVIRONMENT, IN_LAMBDA
from tests.conftest import ROOT

BUILDER = ROOT / "layers" / "core" / "mongomem" / "config" / "environment.py"
# What settings_from_env may give a literal value: a variable's name (MONGOMEM_..., AWS_REGION).
VARIABLE_NAME = re.compile(r"[A-Z][A-Z0-9_]+")
# The names a default is given under: Settings' fields and the deployment's providers' fields.
FIELDS = {*Settings.model_fields, *LLMProviderConfig.model_fields, *EmbeddingProviderConfig.model_fields}


def literal_values(source: str) -> Iterator[tuple[int, str, object]]:
    """Each literal given under a field's name: `{"name": 4}`, `f(name=4)`, `values["name"] = 4`."""
    for node in ast.walk(ast.parse(source)):
        pairs: list[tuple[ast.expr | None, ast.expr]] = []
        if isinstance(node, ast.Dict):
            pairs = list(zip(node.keys, node.values, strict=True))
        elif isinstance(node, ast.Call):
            pairs = [(ast.Constant(k.arg), k.value) for k in node.keywords if k.arg]
        elif isinstance(node, ast.Assign):
            pairs = [(t.slice, node.value) for t in node.targets if isinstance(t, ast.Subscript)]
        for key, value in pairs:
            if isinstance(key, ast.Constant) and key.value in FIELDS and isinstance(value, ast.Constant):
                literal = value.value
                if literal is not None and not (
                    isinstance(literal, str) and VARIABLE_NAME.fullmatch(literal)
                ):
                    yield getattr(node, "lineno", 0), key.value, literal


def test_no_variable_declares_a_default_of_its_own() -> None:
    # None is "unset": Settings' default applies, so the default is written once, on Settings
    redeclared = {
        name: field.default
        for name, field in EnvironmentSettings.model_fields.items()
        if field.default is not None or field.default_factory is not None
    }
    assert redeclared == {}


def test_a_variable_has_its_settings_fields_type_and_bounds() -> None:
    for name in FROM_ENVIRONMENT:
        ours, theirs = EnvironmentSettings.model_fields[name], Settings.model_fields[name]
        declared: Any = (
            Annotated[theirs.annotation, *theirs.metadata] if theirs.metadata else theirs.annotation
        )
        assert ours.annotation == declared | None, name
    # the same bound refuses the same value, on both
    with pytest.raises(ValueError, match="MONGOMEM_LEASE_SECONDS"):
        settings_from_env({"MONGOMEM_LEASE_SECONDS": "4"})
    with pytest.raises(ValueError, match="lease_seconds"):
        Settings(lease_seconds=4)


def test_building_settings_from_the_environment_gives_no_value_of_its_own() -> None:
    # a default written in settings_from_env (as the Lambda pool size was: 100 on Settings, 4 there)
    found = list(literal_values(BUILDER.read_text(encoding="utf-8")))
    assert found == [], "declare the default on Settings (or, for Lambda only, in IN_LAMBDA)"


def test_the_scan_finds_a_default_written_where_settings_are_built() -> None:
    source = 'values["mongo_max_pool_size"] = 4\nSettings(ensure_indexes=False)\nx = {"kind": "offline"}\n'
    found = {(name, value) for _, name, value in literal_values(source)}
    assert found == {("mongo_max_pool_size", 4), ("ensure_indexes", False), ("kind", "offline")}


def test_inside_lambda_only_the_lambda_defaults_change() -> None:
    local, deployed = settings_from_env({}), settings_from_env({"AWS_LAMBDA_FUNCTION_NAME": "f"})
    changed = {
        name
        for name in Settings.model_fields
        if getattr(local, name) != getattr(deployed, name) and name not in {"in_lambda", "function_name"}
    }
    assert changed == set(IN_LAMBDA)
    assert {name: getattr(deployed, name) for name in IN_LAMBDA} == IN_LAMBDA
    # a variable still wins over the Lambda default
    chosen = settings_from_env({"AWS_LAMBDA_FUNCTION_NAME": "f", "MONGOMEM_MONGO_MAX_POOL_SIZE": "10"})
    assert chosen.mongo_max_pool_size == 10
