"""Error logs never copy what a caller sent: pydantic puts the refused value into its errors' text
(`input_value=...`), and a traceback or a message holding one would carry it into CloudWatch."""

from __future__ import annotations

import io
import json
import logging

import pytest
from pydantic import BaseModel, ValidationError

from mongomem.observability import logger, scrub_line

SECRET = "4111-1111-1111-1111 ssn 078-05-1120"


class Card(BaseModel):
    number: int
    holder: dict[str, int]


def test_a_logged_validation_error_keeps_the_error_and_drops_the_value() -> None:
    # Given the service's logger writing its JSON lines (with its own formatter) somewhere we can read
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logger.registered_formatter)
    level = logger.log_level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    # and a model that refuses a caller's values (one of them forging pydantic's own separator)
    try:
        try:
            Card.model_validate({"number": SECRET, "holder": {"x": f"{SECRET}, input_type=str] {SECRET}"}})
        except ValidationError:
            # When it is logged as an unexpected error (the API's 500 path logs exactly this way)
            logger.exception("unhandled error")
        logger.info(
            "refused", extra={"detail": f"bad [type=int_parsing, input_value='{SECRET}', input_type=str]"}
        )
    finally:
        logger.setLevel(level)
        logger.removeHandler(handler)  # type: ignore[attr-defined]  # Powertools passes it to its logging.Logger
    # (only this test's lines: a local stack another test left running may log on the same logger meanwhile)
    lines = [
        json.loads(line)
        for line in out.getvalue().splitlines()
        if line.startswith("{") and json.loads(line).get("message") in ("unhandled error", "refused")
    ]
    # Then the lines say what failed, where, and of which type - never the value
    assert len(lines) == 2
    text = json.dumps(lines)
    assert "078-05-1120" not in text and "4111" not in text
    assert "int_parsing" in text and "input_value=<hidden>" in text and "holder.x" in text


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "  Input should be a valid integer [type=int_parsing, input_value='abc', input_type=str]",
            "  Input should be a valid integer [type=int_parsing, input_value=<hidden>, input_type=str]",
        ),
        (
            "[type=x, input_value='a, input_type=str] b', input_type=str]",
            "[type=x, input_value=<hidden>, input_type=str]",
        ),
        ("no value here", "no value here"),
        ("truncated input_value='abc", "truncated input_value=<hidden>"),
    ],
)
def test_scrub_line(line: str, expected: str) -> None:
    assert scrub_line(line) == expected
