"""The applied project config of a deployed stack: an SSM parameter read through Powertools Parameters.

`mongomem memory configure` uploads a version of the parameter, `mongomem memory apply` moves the
APPLIED_LABEL onto it; functions read `<name>:applied` when their runtime says the config's max age
has passed (the runtime keeps the age; every read here goes to SSM).

SSM serves GetParameter at 40 transactions per second per account by default and throttles beyond
(a cold-start burst of every function shares them): botocore retries a throttled read a few times
within one call; a read still throttled then is tried again here, with backoff, before it fails.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

APPLIED_LABEL = "applied"
_MISSING = ("ParameterNotFound", "ParameterVersionLabelNotFound", "ParameterVersionNotFound")
_THROTTLED = ("ThrottlingException", "TooManyUpdates", "Rate exceeded")
# Reads of one load (each botocore's call of 3 attempts, standard retry mode) and the first backoff
# between them: a few seconds in all, well inside API Gateway's 30 s when a request waits on it.
READ_ATTEMPTS = 3
BACKOFF_SECONDS = 0.5
_provider: Any = None


def _ssm() -> Any:
    """Powertools' SSM provider on a client in botocore's standard retry mode (3 attempts, short capped
    backoff) rather than the legacy mode's 5 attempts and up to 15 s of sleeps."""
    global _provider
    if _provider is None:
        from aws_lambda_powertools.utilities.parameters import SSMProvider  # lazy: 177 ms
        from botocore.config import Config  # lazy: 93 ms

        _provider = SSMProvider(boto_config=Config(retries={"mode": "standard", "max_attempts": 3}))
    return _provider


@dataclass(frozen=True)
class ConfigText:
    text: str | None  # None: nothing applied yet (the stack runs on its template defaults)
    source: str


class ConfigSourceError(Exception):
    """The parameter could not be read (permissions, throttling, network)."""


def read_applied(
    name: str, max_age: int, force: bool = True, sleep: Callable[[float], None] = time.sleep
) -> ConfigText:
    """The applied config text of parameter `name` (None when nothing is applied)."""
    from aws_lambda_powertools.utilities import parameters  # lazy: 174 ms

    selector = f"{name}:{APPLIED_LABEL}"
    for attempt in range(READ_ATTEMPTS):
        try:
            value = _ssm().get(selector, max_age=max_age, force_fetch=force)
            return ConfigText(str(value), f"ssm:{selector}")
        except parameters.exceptions.GetParameterError as exc:
            code = getattr(exc.__cause__, "response", {}).get("Error", {}).get("Code", "")
            if code in _MISSING or any(m in str(exc) for m in _MISSING):
                return ConfigText(None, f"ssm:{selector} (not applied yet: template defaults)")
            throttled = code in _THROTTLED or any(t in str(exc) for t in _THROTTLED)
            if not throttled or attempt == READ_ATTEMPTS - 1:
                raise ConfigSourceError(f"cannot read {selector}: {exc}") from exc
            sleep(BACKOFF_SECONDS * 2**attempt * (0.5 + random.random()))
    raise AssertionError("unreachable")
