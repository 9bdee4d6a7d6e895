"""docs/architecture.md lists exactly the import-linter contracts pyproject.toml enforces, so the
architecture a newcomer reads is the one CI checks."""

from __future__ import annotations

import re
import tomllib

from tests.conftest import REPO


def _documented() -> list[tuple[str, str]]:
    text = (REPO / "docs" / "architecture.md").read_text()
    section = text[text.index("| contract | kind | what it keeps true |") :]
    rows = []
    for line in section.splitlines()[2:]:
        if not line.startswith("|"):
            break
        name, kind, _why = (cell.strip() for cell in line.strip("|").split("|"))
        rows.append((name, kind))
    return rows


def test_every_contract_is_documented_with_its_kind_and_nothing_else() -> None:
    contracts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"
    ]
    assert _documented() == [(c["name"], c["type"]) for c in contracts]


def test_every_documented_row_says_why() -> None:
    text = (REPO / "docs" / "architecture.md").read_text()
    section = text[text.index("| contract | kind | what it keeps true |") :]
    for line in section.splitlines()[2 : 2 + len(_documented())]:
        assert re.search(r"\|\s*[^|\s][^|]*\|\s*$", line), line
