"""The built-in kinds' names are listed once (mongomem.kindnames); the places that need one object or
one setting per kind hold exactly those names."""

from __future__ import annotations

import re

import pytest

from mongomem.config import ConfigError, ExtractionConfig, parse_project_config
from mongomem.kindnames import CUSTOM_QUEUE, KIND_NAME_PATTERN, builtin_names, queue_name
from mongomem.kinds.registry import builtin_registry
from tests.conftest import ROOT


def test_the_registry_holds_one_kind_per_builtin_name() -> None:
    assert [kind.name for kind in builtin_registry()] == builtin_names()


def test_the_extraction_settings_take_each_builtin_kind_by_name_and_refuse_other_keys() -> None:
    tuned = {name: {"prompt": f"only {name}"} for name in builtin_names()}
    extraction = parse_project_config({"memory": {"extraction": tuned}}).memory.extraction
    assert {name: extraction.of(name).prompt for name in builtin_names()} == {
        name: f"only {name}" for name in builtin_names()
    }
    assert ExtractionConfig().of(builtin_names()[0]).prompt is None
    with pytest.raises(ConfigError) as err:
        parse_project_config({"memory": {"extraction": {"semantik": {"prompt": "x"}}}})
    assert "memory.extraction.semantik: not a built-in kind" in str(err.value) and all(
        name in str(err.value) for name in builtin_names()
    )


def test_the_template_has_one_extraction_queue_per_builtin_kind_and_one_for_custom_types() -> None:
    template = (ROOT / "template.yaml").read_text(encoding="utf-8")
    queues = {m.lower() for m in re.findall(r"^  (\w+)Queue:$", template, re.M)}
    # per kind, and the one lane of `ExtractionLanes=one` (docs/adr/0071)
    assert queues == {queue_name(n) for n in builtin_names()} | {CUSTOM_QUEUE, "extraction"}


def test_every_builtin_name_is_a_valid_kind_name() -> None:
    assert all(re.fullmatch(KIND_NAME_PATTERN, n) for n in builtin_names())
