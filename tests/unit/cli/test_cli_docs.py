"""Docs cannot drift: every registered command has help text and a page in docs/commands/."""

from __future__ import annotations

from pathlib import Path

import typer.main

from kubectl_storage.cli.app import app

DOCS = Path(__file__).resolve().parents[3] / "docs" / "commands"


def test_every_command_has_help_and_a_docs_page() -> None:
    group = typer.main.get_command(app)
    ctx = group.make_context("kubectl storage", [], resilient_parsing=True)
    names = sorted(group.list_commands(ctx))  # type: ignore[attr-defined]
    assert {"classes", "cleanup", "fio", "completion"} <= set(names)
    for name in names:
        command = group.get_command(ctx, name)  # type: ignore[attr-defined]
        assert command.help, f"{name} has no help"
        assert "Examples" in command.help, f"{name} help lacks examples"
        page = DOCS / f"{name}.md"
        assert page.is_file(), f"docs/commands/{name}.md is missing"
        assert f"kubectl storage {name}" in page.read_text()
