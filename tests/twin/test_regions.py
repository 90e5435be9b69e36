"""Every commercial region: the template deploys wherever the services it uses exist.

CloudFormation checks a template's resource types against its region's registry before it evaluates any
condition ("Template format error: Unrecognized resource types"), so one resource of a type the region
lacks makes the whole template undeployable there, whatever the parameters. OpenSearch Serverless is such
a type: regions with Lambda, HTTP APIs, SQS, OpenSearch Service and Bedrock lack it (il-central-1,
me-central-1, ap-southeast-5, mx-central-1, ...). Its resources live in nested stacks (nested/), created
only with OpenSearchMode=serverless (docs/adr/0045-every-region-serverless-search-in-nested-stacks.md).

cfn-lint's region schemas (the CloudFormation registry of each region, as cfn-lint ships it) are the
source: they come with the SAM CLI's environment (.venv-sam).
"""

from __future__ import annotations

import json
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

SAM_VENV = ROOT / ".venv-sam"
NESTED = sorted((ROOT / "nested").glob("*.yaml"))
# Other partitions (China, GovCloud, the ISO regions, the European Sovereign Cloud): not commercial.
NOT_COMMERCIAL = ("cn-", "us-gov-", "us-iso", "eu-isoe-", "eusc-")


def _cfnlint_data() -> Path:
    found = sorted(SAM_VENV.glob("lib/python*/site-packages/cfnlint/data/schemas"))
    if not found:
        pytest.fail("cfn-lint is missing from .venv-sam: run `make sam-validate`", pytrace=False)
    return found[-1]


def commercial_regions() -> list[str]:
    providers = _cfnlint_data() / "providers"
    names = [p.stem for p in providers.glob("*-*-*.json")]
    return sorted(n for n in names if not n.startswith(NOT_COMMERCIAL))


def region_types(region: str) -> set[str]:
    return set(json.loads((_cfnlint_data() / "providers" / f"{region}.json").read_text()))


def template_types(path: Path) -> set[str]:
    from twin.cfn import load_template

    return {spec["Type"] for spec in load_template(path)["Resources"].values()}


def cfn_lint(path: Path, regions: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SAM_VENV / "bin" / "cfn-lint"), "--regions", *regions, "--", str(path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )


def test_the_template_lints_clean_in_every_commercial_region() -> None:
    regions = commercial_regions()
    # the regions the issue names are among them, and some lack OpenSearch Serverless (else this proves little)
    assert {
        "il-central-1",
        "me-central-1",
        "ap-southeast-5",
        "mx-central-1",
        "af-south-1",
        "ca-west-1",
    } <= set(regions)
    without = [r for r in regions if "AWS::OpenSearchServerless::Collection" not in region_types(r)]
    assert "il-central-1" in without and "eu-west-1" not in without
    # Given every commercial region's registry, cfn-lint finds nothing in the template (E3006: a type the
    # region lacks, before any condition; on 2c77ce7 five per region without OpenSearch Serverless)
    done = cfn_lint(ROOT / "template.yaml", regions)
    assert done.returncode == 0, done.stdout + done.stderr
    # and each nested template is clean wherever its types exist: the regions it can be created in
    for nested in NESTED:
        where = [r for r in regions if template_types(nested) <= region_types(r)]
        assert "eu-west-1" in where and "us-east-1" in where
        done = cfn_lint(nested, where)
        assert done.returncode == 0, f"{nested.name}: {done.stdout}{done.stderr}"


def test_no_mode_puts_a_region_limited_type_in_the_root_template() -> None:
    from twin.stack import REGION_LIMITED_TYPES

    # the twin's list of region-limited types covers what cfn-lint's data says some commercial region lacks
    # among the types the stack uses anywhere (root or nested)
    used = set().union(*(template_types(p) for p in NESTED), template_types(ROOT / "template.yaml"))
    everywhere = set.intersection(*(region_types(r) for r in commercial_regions()))
    limited = {
        t for t in used if t.startswith("AWS::") and not t.startswith("AWS::Serverless::")
    } - everywhere
    assert limited and limited <= REGION_LIMITED_TYPES, limited - REGION_LIMITED_TYPES
    # the root template names none of them in any mode: what CloudFormation would check, before conditions,
    # is the transformed template's every resource (a condition does not hide a type)
    built = ROOT / ".aws-sam" / "build" / "template.yaml"
    if not built.exists():
        pytest.fail("run `make sam-build` (make twin does)", pytrace=False)
    from twin.cfn import load_template, sam_transform

    for mode in ("domain", "serverless", "existing", "none"):
        params = {"OpenSearchMode": mode}
        if mode == "existing":
            params |= {"OpenSearchEndpoint": "https://x.example.com", "OpenSearchResourceArn": "arn:aws:es:x"}
        template = sam_transform(load_template(built), SAM_VENV / "bin" / "python", "il-central-1", params)
        types = {spec["Type"] for spec in template["Resources"].values()}
        assert not types & REGION_LIMITED_TYPES, (mode, types & REGION_LIMITED_TYPES)


def test_a_region_without_opensearch_serverless_deploys_the_default_and_refuses_only_serverless(
    twin: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from twin.stack import REGION_LIMITED_TYPES

    # Given the twin's region lacks OpenSearch Serverless's types, as il-central-1 does (every root template
    # the twin deploys is checked against them anyway; now nested ones are too)
    twin.missing_types = REGION_LIMITED_TYPES
    try:
        # the default deploy (a domain) goes through, its migration creating the index through the domain
        params = {"Stage": "ilc", "MongoDbName": "mongomem_ilc", "OpenSearchIndex": "mongomem-ilc"}
        stack = twin.deploy("mongomem-ilc", params, tmp_path_factory.mktemp("ilc"))
        assert "SearchDomain" in stack.resources
        assert not {r.type for r in stack.resources.values()} & REGION_LIMITED_TYPES
        with urllib.request.urlopen(f"{twin.opensearch_url}/mongomem-ilc/_mapping") as answer:
            assert "vector" in json.loads(answer.read())["mongomem-ilc"]["mappings"]["properties"]
        # and serverless, the one mode that needs the service, is refused where CloudFormation would refuse
        # it: at its nested stack
        serverless = {"Stage": "ilcs", "MongoDbName": "mongomem_ilcs", "OpenSearchMode": "serverless"}
        with pytest.raises(RuntimeError, match="Unrecognized resource types"):
            twin.deploy("mongomem-ilcs", serverless, tmp_path_factory.mktemp("ilcs"))
    finally:
        twin.missing_types = frozenset()
