"""Secrets Manager access through Powertools parameters (cached with a max age, refetched on demand)."""

from __future__ import annotations

import json
from typing import Any

from mongomem.config import ConfigError

SECRET_MAX_AGE = 300


def _secret_text(secret_id: str, force: bool) -> str:
    from aws_lambda_powertools.utilities import parameters  # lazy: 162 ms

    try:
        value = parameters.get_secret(secret_id, max_age=SECRET_MAX_AGE, force_fetch=force)
    except parameters.exceptions.GetParameterError as exc:
        raise ConfigError(f"cannot read secret {secret_id!r}: {exc}") from exc
    return value.decode() if isinstance(value, bytes) else str(value)


def mongodb_uri_from_secret(secret_id: str, force: bool = False) -> str:
    """The MongoDB URI stored in a secret: the plain string or JSON {"uri": ...}.

    `force` skips the cache: after an authentication failure the password may have been rotated.
    """
    text = _secret_text(secret_id, force).strip()
    if text.startswith("{"):
        try:
            return str(json.loads(text)["uri"])
        except (ValueError, KeyError) as exc:
            raise ConfigError(f'secret {secret_id!r} is JSON without a "uri" field') from exc
    return text


def provider_keys(secret_id: str) -> dict[str, str]:
    """Provider API keys kept as one JSON object {"OPENAI_API_KEY": "...", ...}."""
    text = _secret_text(secret_id, False)
    try:
        data: Any = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"secret {secret_id!r} must be a JSON object of API keys") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"secret {secret_id!r} must be a JSON object of API keys")
    return {str(k): str(v) for k, v in data.items() if isinstance(v, str) and v}
