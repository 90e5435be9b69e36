"""The applied project config of a deployed stack: an SSM parameter read through Powertools Parameters.

`mongomem memory configure` uploads a version of the parameter, `mongomem memory apply` moves the
APPLIED_LABEL onto it; functions read `<name>:applied`, cached for the stack's config max age.
"""

from __future__ import annotations

from dataclasses import dataclass

APPLIED_LABEL = "applied"
_MISSING = ("ParameterNotFound", "ParameterVersionLabelNotFound", "ParameterVersionNotFound")


@dataclass(frozen=True)
class ConfigText:
    text: str | None  # None: nothing applied yet (the stack runs on its template defaults)
    source: str


class ConfigSourceError(Exception):
    """The parameter could not be read (permissions, throttling, network)."""


def read_applied(name: str, max_age: int, force: bool = False) -> ConfigText:
    """The applied config text of parameter `name` (None when nothing is applied)."""
    from aws_lambda_powertools.utilities import parameters

    selector = f"{name}:{APPLIED_LABEL}"
    try:
        value = parameters.get_parameter(selector, max_age=max_age, force_fetch=force)
    except parameters.exceptions.GetParameterError as exc:
        code = getattr(exc.__cause__, "response", {}).get("Error", {}).get("Code", "")
        if code in _MISSING or any(m in str(exc) for m in _MISSING):
            return ConfigText(None, f"ssm:{selector} (not applied yet: template defaults)")
        raise ConfigSourceError(f"cannot read {selector}: {exc}") from exc
    return ConfigText(str(value), f"ssm:{selector}")
