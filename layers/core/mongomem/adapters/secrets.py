"""Secrets Manager access through Powertools parameters (cached with a max age)."""

from __future__ import annotations

import json


def mongodb_uri_from_secret(arn: str) -> str:
    """The MongoDB URI stored in a secret: either the plain string or JSON {"uri": ...}."""
    from aws_lambda_powertools.utilities import parameters

    value = parameters.get_secret(arn, max_age=300)
    text = value.decode() if isinstance(value, bytes) else str(value)
    if text.lstrip().startswith("{"):
        return str(json.loads(text)["uri"])
    return text
