"""Updates that don't replace: the parameter changes the operations guide calls "a parameter change" update
the stack in place, or create what they need beside the old resources, never replace a named resource in
place (CloudFormation cannot create a second resource with the same custom name, so such an update ends
UPDATE_ROLLBACK_COMPLETE: "CloudFormation cannot update a stack when a custom-named resource requires
replacing").

Which property changes replace a resource: the resource type's `createOnlyProperties` in the CloudFormation
registry schema (cfn-lint's copy, eu-west-1), plus what AWS documents beside the schema (EXTRA_REPLACEMENTS).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.twin.test_regions import _cfnlint_data
from tests.twin.test_template_parameters import VPC, Resolved, resolve


# Replacements the registry schema does not list, from the resource's documentation: (old, new) -> the
# properties whose change replaces it.
def _domain_extra(old: dict[str, Any], new: dict[str, Any]) -> set[str]:
    # AWS::OpenSearchService::Domain: a domain created public cannot move into a VPC, nor the reverse
    # ("Launching your Amazon OpenSearch Service domains within a VPC": "you can't switch from VPC to a public
    # endpoint, or the reverse"); its subnets and security groups change in place. EngineVersion ("Update
    # requires: Replacement" unless the UpdatePolicy sets EnableVersionUpgrade) is checked on its own below.
    return {"VPCOptions"} if ("VPCOptions" in old) != ("VPCOptions" in new) else set()


EXTRA_REPLACEMENTS = {"AWS::OpenSearchService::Domain": _domain_extra}
# A new version under the same name is what a layer update is: never a conflict.
VERSIONED = {"AWS::Lambda::LayerVersion", "AWS::CloudFormation::Stack"}

# The changes docs/operations.md calls "a parameter change" (from, to), and a few every deploy makes.
CHANGES: list[tuple[str, dict[str, str], dict[str, str]]] = [
    ("domain to serverless", {}, {"OpenSearchMode": "serverless"}),
    ("serverless to domain", {"OpenSearchMode": "serverless"}, {}),
    ("domain to none", {}, {"OpenSearchMode": "none"}),
    ("larger instance type", {}, {"OpenSearchDomainInstanceType": "r7g.large.search"}),
    ("two nodes", VPC, {**VPC, "OpenSearchDomainInstanceCount": "2"}),
    ("three nodes", VPC, {**VPC, "OpenSearchDomainInstanceCount": "3"}),
    ("more storage", {}, {"OpenSearchDomainVolumeGiB": "20"}),
    ("the public domain into a VPC", {}, dict(VPC)),
    (
        "standby replicas on",
        {"OpenSearchMode": "serverless"},
        {"OpenSearchMode": "serverless", "OpenSearchStandbyReplicas": "ENABLED"},
    ),
    (
        "VPC endpoints on",
        {**VPC, "OpenSearchMode": "serverless"},
        {**VPC, "OpenSearchMode": "serverless", "CreateVpcEndpoints": "true"},
    ),
    ("extraction concurrency", {}, {"ExtractionMaxConcurrency": "4", "ExtractionBatchSize": "5"}),
    # one extraction lane (docs/adr/0071): new queues and function beside the per-kind ones, then those go
    ("one extraction lane", {}, {"ExtractionLanes": "one"}),
    ("back to a lane per kind", {"ExtractionLanes": "one"}, {}),
    ("another model", {}, {"LlmModelId": "global.anthropic.claude-haiku-4-5-20251001-v1:0"}),
    ("log retention", {}, {"LogRetentionDays": "90", "LogLevel": "DEBUG"}),
]


def _create_only(kind: str) -> set[str]:
    data = _cfnlint_data()
    providers = json.loads((data / "providers" / "eu-west-1.json").read_text())
    if kind not in providers:
        return set()
    schema = json.loads((data / "resources" / f"{providers[kind]}.json").read_text())
    return {p.split("/")[2] for p in schema.get("createOnlyProperties") or []}


def _name_properties(kind: str, props: dict[str, Any]) -> dict[str, Any]:
    """The custom names a resource was given (create-only properties whose name says they are names)."""
    return {k: props[k] for k in _create_only(kind) if k in props and (k == "Name" or k.endswith("Name"))}


def replaced_named_resources(before: Resolved, after: Resolved) -> list[str]:
    conflicts = []
    for logical, (kind, old) in before.resources.items():
        if logical not in after.resources or after.resources[logical][0] != kind or kind in VERSIONED:
            continue
        new = after.resources[logical][1]
        names = _name_properties(kind, old)
        if not names or names != _name_properties(kind, new):
            continue  # unnamed, or renamed: CloudFormation creates the new one beside the old
        changed = {k for k in set(old) | set(new) if old.get(k) != new.get(k)}
        extra = EXTRA_REPLACEMENTS.get(kind, lambda _o, _n: set())(old, new)
        replacing = (changed & _create_only(kind)) | extra
        if replacing:
            conflicts.append(f"{logical} ({kind}, {names}): {sorted(replacing)}")
    return conflicts


@pytest.mark.parametrize(("change", "before", "after"), CHANGES, ids=[c[0] for c in CHANGES])
def test_a_parameter_change_replaces_no_named_resource(
    change: str, before: dict[str, str], after: dict[str, str]
) -> None:
    # Given a stack deployed with `before`, when it is deployed again with `after`, no resource keeps its
    # custom name while a change needs a new one (on 2c77ce7: the domain into a VPC, standby replicas on)
    assert replaced_named_resources(resolve(**before), resolve(**after)) == []


def test_an_engine_upgrade_is_an_in_place_update() -> None:
    stack = resolve()
    # EngineVersion is replaced unless EnableVersionUpgrade: the domain upgrades in place (blue/green)
    assert stack.attributes["SearchDomain"]["UpdatePolicy"] == {"EnableVersionUpgrade": True}
    # and the check above catches a replacement under the same name (here: the domain moved into a VPC
    # without the new name the template gives it)
    bumped = Resolved(**{**stack.__dict__, "resources": dict(stack.resources)})
    kind, props = stack.resources["SearchDomain"]
    bumped.resources["SearchDomain"] = (kind, {**props, "VPCOptions": {"SubnetIds": ["subnet-a"]}})
    assert replaced_named_resources(stack, bumped)


def test_an_upgraded_serverless_stack_creates_its_nested_collection_beside_the_old_one() -> None:
    # 2c77ce7 named the collection and its policies in the root template; moved into a nested stack they are
    # new resources, created before the old ones are deleted: a name both carry would fail the upgrade
    # (collection and policy names are unique per account and region)
    before = {
        "mongomem-dev",
        "mongomem-dev-enc",
        "mongomem-dev-net",
        "mongomem-dev-data",
        "mongomem-dev-vpce",
    }
    for params in ({}, {"OpenSearchStandbyReplicas": "ENABLED"}, {**VPC, "CreateVpcEndpoints": "true"}):
        stack = resolve(OpenSearchMode="serverless", **params)
        names = {
            props["Name"]
            for kind, props in stack.resources.values()
            if kind.startswith("AWS::OpenSearchServerless::")
        }
        assert len(names) >= 4 and not names & before, names
        assert all(len(n) <= 32 for n in names)
