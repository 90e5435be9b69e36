"""The documented deploys (`sam deploy [--config-env staging|prod]`) carry their stage, region and parameters."""

from __future__ import annotations

import tomllib

import pytest

from tests.conftest import ROOT

ENVIRONMENTS = {"default": "dev", "staging": "staging", "prod": "prod"}


@pytest.mark.parametrize(("environment", "stage"), ENVIRONMENTS.items())
def test_each_environment_deploys_its_own_stage_with_valid_parameters(environment: str, stage: str) -> None:
    from twin.cfn import Resolver, load_template
    from twin.stack import samconfig

    name, params = samconfig(ROOT, environment)
    config = tomllib.loads((ROOT / "samconfig.toml").read_text())[environment]
    # Given the environment's settings, the stage and region are part of them (not of a command line)
    assert params["Stage"] == stage and stage in name
    assert config["global"]["parameters"]["region"]
    # and every parameter is one the template declares, with a value it allows; nothing required is missing
    template = load_template(ROOT / "template.yaml")
    resolver = Resolver(template, params, {}, lambda _: None, lambda *_: None)
    assert resolver.parameters["Stage"] == stage


def test_stack_names_differ_between_environments() -> None:
    from twin.stack import samconfig

    names = [samconfig(ROOT, e)[0] for e in ENVIRONMENTS]
    assert len(set(names)) == len(names)
