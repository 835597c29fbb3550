"""``sabha recall "<question>"`` through the real CLI on a board made by ``sabha init`` (the offline model): a
meeting held with ``sabha meeting`` and a question asked with ``sabha ask`` are found, each passage with its
citation, on both backends; no words is a usage error."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from board.storage import StateURL
from tests.bot.cli.test_cli import run
from tests.bot.cli.test_ratify_cli import MINE, meeting

pytestmark = pytest.mark.backends


@pytest.fixture
def home(tmp_path: Path, state_url: StateURL | None) -> Path:
    """A board made by ``sabha init``; its state on the test's backend."""
    result = run(["init", str(tmp_path / "proj")], cwd=tmp_path, env=MINE)
    assert result.returncode == 0, result.stderr
    if state_url is not None:
        with (tmp_path / "proj" / "sabha.yaml").open("a") as config:
            config.write(f"\nstate:\n  url: {state_url}\n")
    return tmp_path / "proj"


def test_sabha_recall_finds_meetings_decisions_and_conversations_with_citations(home: Path) -> None:
    empty = run(["recall", "Pune"], cwd=home, env=MINE)
    assert empty.returncode == 0 and empty.stdout.startswith("nothing "), empty.stderr  # no state, or none found
    meeting_id = meeting(home, "Should we open an office in Pune?")
    asked = run(["ask", "--role", "finance", "What would a Pune office cost us per desk?"], cwd=home, env=MINE)
    assert asked.returncode == 0, asked.stderr
    found = run(["recall", "Pune", "office"], cwd=home, env=MINE)
    assert found.returncode == 0, found.stderr
    assert f"[decision {meeting_id}]" in found.stdout
    assert re.search(rf"^\[meeting {meeting_id}, round \d+\] \w+: ", found.stdout, re.M), found.stdout
    assert re.search(r"^\[finance, \d{4}-\d\d-\d\d\] user: What would a Pune office cost", found.stdout, re.M)
    as_json = run(["recall", "Pune office", "--json", "--limit", "3"], cwd=home, env=MINE)
    passages = json.loads(as_json.stdout)
    assert len(passages) == 3 and all(p["cite"].startswith("[") for p in passages)
    nothing = run(["recall", "zanzibar"], cwd=home, env=MINE)
    assert nothing.returncode == 0 and nothing.stdout.startswith("nothing found for 'zanzibar'")
