"""docs/aws-rules.md stays true: every rule names an AWS documentation page, and every test it cites exists.

The page is how a reviewer checks the twin against AWS (issue 21): a rule without its page, or a test
name that no longer exists, is a claim nobody can check.
"""

from __future__ import annotations

import re

from tests.conftest import ROOT

DOC = ROOT / "docs" / "aws-rules.md"
AWS_PAGE = re.compile(r"\]\(https://docs\.aws\.amazon\.com/[^)\s]+\)")
# `tests/x.py::test_name`, `::test_name` (the file before it in the cell) or a bare `test_name`; a name
# ending in `_` is an abbreviation (`test_the_collection_refuses_...`) and is checked as a prefix
CITED = re.compile(r"(?:(tests/[\w/]+\.py))?(?:::)?\b(test_\w+)(?![\w.])")


def rule_rows() -> list[list[str]]:
    rows = []
    for line in DOC.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| ") or cells[0] in ("rule", "---") or set(cells[0]) <= {"-", " "}:
            continue
        rows.append(cells)
    return rows


def defined_tests() -> dict[str, set[str]]:
    """test name -> the files (relative to the repository) that define it."""
    found: dict[str, set[str]] = {}
    for path in (ROOT / "tests").rglob("test_*.py"):
        for name in re.findall(r"^(?:async )?def (test_\w+)", path.read_text(), re.M):
            found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_rule_names_its_aws_documentation_page() -> None:
    rows = rule_rows()
    assert len(rows) >= 30  # the tables were read (seven services)
    missing = [row[0][:80] for row in rows if not AWS_PAGE.search(row[1])]
    assert not missing, f"rules without an AWS documentation page in their source column: {missing}"


# A GitHub issue (`owner/repo#123`, `repo#123`) or a tool's data file is a second-hand source.
SECOND_HAND = re.compile(r"[\w-]#\d+|cfnlint/data")


def test_a_rule_resting_on_an_issue_or_tool_data_says_it_is_observed_behaviour() -> None:
    # a detail no AWS page gives (an error's wording, a status code a live service answered) is labelled as
    # what it is: observed behaviour, and how it was learned; it never passes for the page
    unlabelled = [
        row[0][:80]
        for row in rule_rows()
        if SECOND_HAND.search(row[1]) and "observed behaviour" not in row[1]
    ]
    assert not unlabelled, f"rules citing issues or tool data without saying they are observed: {unlabelled}"


def test_every_test_the_page_cites_exists() -> None:
    tests = defined_tests()
    unknown = []
    for row in rule_rows():
        for cell in row[2:]:
            for path, name in CITED.findall(cell):
                if name.endswith("_"):
                    files = set().union(*(f for n, f in tests.items() if n.startswith(name)))
                else:
                    files = tests.get(name, set())
                if not files or (path and path not in files):
                    unknown.append(f"{path}::{name}" if path else name)
    assert not unknown, f"docs/aws-rules.md cites tests that do not exist: {unknown}"
