"""CloudFormation as the twin needs it: read the built template, run the SAM transform, resolve intrinsics.

The transform is AWS's own (samtranslator, run by tools/twin/translate.py in the SAM CLI's
interpreter), so what is resolved here is what CloudFormation would be given by `sam deploy`.
Intrinsics are evaluated for one parameter set, with physical names and attributes the twin
assigns to each resource (resources.py).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

NO_VALUE = object()  # AWS::NoValue: the enclosing key or list item disappears


class _CfnLoader(yaml.SafeLoader):
    """YAML with CloudFormation's short-form tags (!Ref, !Sub, !GetAtt a.b, ...)."""


def _tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    name = suffix if suffix in ("Ref", "Condition") else f"Fn::{suffix}"
    value: Any
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
        if suffix == "GetAtt":
            value = str(value).split(".", 1)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    return {name: value}


_CfnLoader.add_multi_constructor("!", _tag)


def load_template(path: Path) -> dict[str, Any]:
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_CfnLoader)
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not a template")
    return data


def sam_transform(
    template: dict[str, Any], sam_python: Path, region: str, parameters: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The plain CloudFormation template CloudFormation's SAM transform makes for these parameter values."""
    script = Path(__file__).with_name("translate.py")
    env = {**os.environ, "AWS_DEFAULT_REGION": region, "AWS_REGION": region}
    done = subprocess.run(
        [str(sam_python), str(script), json.dumps(dict(parameters or {}))],
        input=json.dumps(template),
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the SAM transform failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


class Resolver:
    """Evaluates conditions and intrinsic functions for one deployment."""

    def __init__(
        self,
        template: dict[str, Any],
        parameters: Mapping[str, str],
        pseudo: Mapping[str, str],
        ref: Callable[[str], Any],
        get_att: Callable[[str, str], Any],
    ) -> None:
        self.template = template
        self.pseudo = dict(pseudo)
        self.ref_resource = ref
        self.get_att = get_att
        self.parameters = self._parameters(parameters)
        self._conditions: dict[str, bool] = {}

    def _parameters(self, given: Mapping[str, str]) -> dict[str, Any]:
        declared = self.template.get("Parameters") or {}
        unknown = set(given) - set(declared)
        if unknown:
            raise ValueError(f"unknown template parameters: {sorted(unknown)}")
        values: dict[str, Any] = {}
        for name, spec in declared.items():
            if name in given:
                raw = str(given[name])
            elif "Default" in spec:
                raw = str(spec["Default"])
            else:
                raise ValueError(f"parameter {name} has no default and no value")
            allowed = spec.get("AllowedValues")
            if allowed is not None and raw not in [str(a) for a in allowed]:
                raise ValueError(f"parameter {name}={raw!r} is not one of {allowed}")
            pattern = spec.get("AllowedPattern")
            if pattern and spec.get("Type", "String") == "String" and not re.fullmatch(pattern, raw):
                raise ValueError(f"parameter {name}={raw!r} does not match {pattern}")
            kind = spec.get("Type", "String")
            if kind == "CommaDelimitedList":
                values[name] = [v.strip() for v in raw.split(",")] if raw else [""]
            else:
                values[name] = raw
        return values

    # -- conditions ----------------------------------------------------------------------------------
    def condition(self, name: str) -> bool:
        if name not in self._conditions:
            spec = (self.template.get("Conditions") or {}).get(name)
            if spec is None:
                raise ValueError(f"unknown condition {name}")
            self._conditions[name] = bool(self.resolve(spec))
        return self._conditions[name]

    def active(self, resource: Mapping[str, Any]) -> bool:
        cond = resource.get("Condition")
        return True if cond is None else self.condition(str(cond))

    def failed_rules(self) -> list[str]:
        """The AssertDescription of every template rule that fails: CloudFormation refuses such a deploy."""
        failed = []
        for name, rule in (self.template.get("Rules") or {}).items():
            if "RuleCondition" in rule and not self.resolve(rule["RuleCondition"]):
                continue
            for assertion in rule.get("Assertions") or []:
                if not self.resolve(assertion["Assert"]):
                    failed.append(str(assertion.get("AssertDescription") or name))
        return failed

    # -- values --------------------------------------------------------------------------------------
    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            items = [self.resolve(v) for v in value]
            return [v for v in items if v is not NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((key, arg),) = value.items()
            fn = _FUNCTIONS.get(key)
            if fn is not None:
                return fn(self, arg)
        out = {}
        for k, v in value.items():
            resolved = self.resolve(v)
            if resolved is not NO_VALUE:
                out[k] = resolved
        return out

    def ref(self, name: str) -> Any:
        if name == "AWS::NoValue":
            return NO_VALUE
        if name in self.pseudo:
            return self.pseudo[name]
        if name in self.parameters:
            return self.parameters[name]
        return self.ref_resource(name)

    def sub(self, arg: Any) -> str:
        if isinstance(arg, list):
            text, variables = arg[0], {k: self.resolve(v) for k, v in (arg[1] or {}).items()}
        else:
            text, variables = arg, {}

        def one(match: re.Match[str]) -> str:
            name = match.group(1)
            if name.startswith("!"):
                return "${" + name[1:] + "}"
            if name in variables:
                return str(variables[name])
            if "." in name and not name.startswith("AWS::"):
                logical, attr = name.split(".", 1)
                return str(self.get_att(logical, attr))
            value = self.ref(name)
            return ",".join(value) if isinstance(value, list) else str(value)

        return re.sub(r"\$\{([^}]+)\}", one, str(text))


def _if(r: Resolver, arg: list[Any]) -> Any:
    return r.resolve(arg[1] if r.condition(arg[0]) else arg[2])


def _get_att(r: Resolver, arg: Any) -> Any:
    logical, attr = arg.split(".", 1) if isinstance(arg, str) else [r.resolve(a) for a in arg]
    return r.get_att(str(logical), str(attr))


def _select(r: Resolver, arg: list[Any]) -> Any:
    index, items = int(r.resolve(arg[0])), r.resolve(arg[1])
    return items[index]


def _split(r: Resolver, arg: list[Any]) -> list[str]:
    return str(r.resolve(arg[1])).split(str(arg[0]))


def _join(r: Resolver, arg: list[Any]) -> str:
    items = r.resolve(arg[1])
    return str(arg[0]).join(str(i) for i in items)


def _find_in_map(r: Resolver, arg: list[Any]) -> Any:
    table, key, attr = (r.resolve(a) for a in arg)
    return r.template["Mappings"][table][key][attr]


_FUNCTIONS: dict[str, Callable[[Resolver, Any], Any]] = {
    "Ref": lambda r, a: r.ref(str(a)),
    "Condition": lambda r, a: r.condition(str(a)),
    "Fn::Sub": lambda r, a: r.sub(a),
    "Fn::GetAtt": _get_att,
    "Fn::If": _if,
    "Fn::Equals": lambda r, a: str(r.resolve(a[0])) == str(r.resolve(a[1])),
    "Fn::Not": lambda r, a: not r.resolve(a[0]),
    "Fn::And": lambda r, a: all(r.resolve(x) for x in a),
    "Fn::Or": lambda r, a: any(r.resolve(x) for x in a),
    "Fn::Select": _select,
    "Fn::Split": _split,
    "Fn::Join": _join,
    "Fn::FindInMap": _find_in_map,
    "Fn::Contains": lambda r, a: str(r.resolve(a[1])) in [str(x) for x in r.resolve(a[0])],
    # rules only: every member of a list equals the value
    "Fn::EachMemberEquals": lambda r, a: all(str(x) == str(r.resolve(a[1])) for x in r.resolve(a[0])),
}


def references(value: Any) -> set[str]:
    """Logical ids a value refers to (Ref, GetAtt, ${X} / ${X.Attr} in Sub): the dependency graph."""
    found: set[str] = set()
    if isinstance(value, list):
        for v in value:
            found |= references(v)
    elif isinstance(value, dict):
        for key, arg in value.items():
            if key == "Ref" and isinstance(arg, str):
                found.add(arg)
            elif key == "Fn::GetAtt":
                found.add(arg.split(".", 1)[0] if isinstance(arg, str) else str(arg[0]))
            elif key == "Fn::Sub":
                text = arg[0] if isinstance(arg, list) else arg
                local = set(arg[1] or {}) if isinstance(arg, list) else set()
                for name in re.findall(r"\$\{([^}!][^}]*)\}", str(text)):
                    head = name.split(".", 1)[0]
                    if head not in local:
                        found.add(head)
                if isinstance(arg, list):
                    found |= references(arg[1])
            else:
                found |= references(arg)
    return found
