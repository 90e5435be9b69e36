"""The repo's project-config.yaml works as shipped: locally with the demo providers, deployed with the stack's."""

from __future__ import annotations

from mongomem.config import settings_from_env
from tests.conftest import ROOT

SHIPPED = ROOT / "project-config.yaml"


def test_locally_the_shipped_config_runs_the_offline_extractor_and_the_local_embedder() -> None:
    # Given `mongomem dev` with the repo's file (no provider named in it)
    settings = settings_from_env({"MONGOMEM_CONFIG_FILE": str(SHIPPED)})
    assert settings.llm_config.kind == "offline"
    assert settings.embedding_config.kind == "local"
    assert settings.demo_refusal("offline") is None


def test_deployed_the_shipped_config_leaves_the_providers_to_the_template() -> None:
    # Given a function with the template's default provider parameters, running the shipped config
    lambda_env = {
        "AWS_LAMBDA_FUNCTION_NAME": "mongomem-dev-ExtractSemanticFunction",
        "MONGOMEM_CONFIG_FILE": str(SHIPPED),
        "MONGOMEM_LLM_PROVIDER": "bedrock",
        "MONGOMEM_LLM_MODEL": "global.amazon.nova-2-lite-v1:0",
        "MONGOMEM_EMBEDDING_PROVIDER": "bedrock-titan-v2",
        "MONGOMEM_EMBEDDING_MODEL": "amazon.titan-embed-text-v2:0",
        "MONGOMEM_EMBEDDING_DIM": "1024",
        "MONGOMEM_ALLOW_DEMO_PROVIDERS": "false",
    }
    settings = settings_from_env(lambda_env)
    assert (settings.llm_config.kind, settings.llm_config.model) == (
        "bedrock",
        "global.amazon.nova-2-lite-v1:0",
    )
    assert (settings.embedding_config.kind, settings.embedding_config.dim) == ("bedrock-titan-v2", 1024)
    # nothing in it is refused in the cloud
    assert settings.demo_refusal(settings.llm_config.kind) is None
    assert settings.demo_refusal(settings.embedding_config.kind) is None


def test_the_shipped_config_the_default_the_template_and_the_docs_name_the_same_kinds() -> None:
    """Issue 25: the README called `preference` a default kind while the shipped file enabled four and
    docs/memory-types.md documented four."""
    import re

    import yaml
    from twin.cfn import load_template

    from mongomem.config import ExtractionConfig
    from mongomem.kinds.registry import builtin_registry

    builtin = builtin_registry().names()
    shipped = yaml.safe_load(SHIPPED.read_text())["memory"]["extraction"]["enabled"]
    template = load_template(ROOT / "template.yaml")["Parameters"]["EnabledExtractions"]["Default"]
    assert shipped == [str(k) for k in ExtractionConfig().enabled] == template.split(",") == builtin
    types_doc = (ROOT / "docs" / "memory-types.md").read_text()
    section = types_doc.split("## The built-in kinds", 1)[1].split("\n## ", 1)[0]
    table = re.findall(r"^\| `([a-z]+)` \|", section, re.MULTILINE)
    assert table == builtin, "docs/memory-types.md documents each built-in kind's payload"
    readme = (ROOT / "README.md").read_text()
    named = re.search(r"per memory type \(([^)]*)\)", readme)
    assert named and [k.strip() for k in named.group(1).split(",")] == builtin
