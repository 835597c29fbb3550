"""``sabha decisions list|show|ratify|veto|revisit`` through the real CLI (the offline model), the
decision state in ``sabha meetings list``, and the terminal showing buttons as the commands they send."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from tests.test_cli import run

REPO = Path(__file__).resolve().parent.parent
MINE = {"PYTHONPATH": str(REPO)}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    result = run(["init", str(tmp_path / "proj")], cwd=tmp_path, env=MINE)
    assert result.returncode == 0, result.stderr
    return tmp_path / "proj"


def sabha(home: Path, *args: str) -> tuple[int, str, str]:
    result = run(list(args), cwd=home, env=MINE)
    return result.returncode, result.stdout, result.stderr


def meeting(home: Path, topic: str) -> str:
    code, out, err = sabha(home, "meeting", topic)
    assert code == 0, err
    found = re.search(r"== Decision (m-\S+) is proposed: sabha decisions ratify (m-\S+)", out)
    assert found is not None and found.group(1) == found.group(2), out
    return found.group(1)


def test_decisions_from_the_terminal(home: Path) -> None:
    assert sabha(home, "decisions", "list")[1].startswith("no decisions yet")
    first = meeting(home, "Should we expand to Europe?")
    code, out, _ = sabha(home, "decisions", "list")
    assert code == 0 and out.split()[:6] == ["ID", "MEETING", "STATE", "BY", "TOPIC", "RECOMMENDATION"]
    assert first in out and "proposed" in out

    code, out, _ = sabha(home, "decisions", "ratify")  # the latest proposed
    assert code == 0 and f"Decision {first}" in out and "ratified by" in out and "(terminal)" in out
    code, out, _ = sabha(home, "decisions", "ratify", first[:14])
    assert code == 0 and "already ratified" in out and "nothing changed" in out
    code, out, _ = sabha(home, "decisions", "veto", first, "too", "late")
    assert code == 2 and "cannot be vetoed now" in out
    code, _, err = sabha(home, "decisions", "ratify", "m-19990101-000000-dead")
    assert code == 2 and "nothing to ratify" in _ + err

    second = meeting(home, "Should we cut prices?")
    code, out, _ = sabha(home, "decisions", "veto", "margins", "are", "too", "thin")  # no id: the latest proposed
    assert code == 0 and f"Decision {second}" in out and "Reason: margins are too thin" in out
    assert "open action item(s)" in out and "dropped" in out
    assert "no open action items" in sabha(home, "actions")[1].lower() or second not in sabha(home, "actions")[1]

    code, out, _ = sabha(home, "decisions", "show", second, "--json")
    data = json.loads(out)
    assert data["verdict"] == "vetoed" and data["reason"] == "margins are too thin"
    assert [r["verdict"] for r in data["rulings"]] == ["vetoed"] and len(data["rulings"][0]["dropped"]) >= 3

    code, out, _ = sabha(home, "decisions", "revisit", first, "the", "EU", "VAT", "rules", "changed")
    assert code == 0 and "sent back for a revisit" in out and "follow-up meeting" in out
    assert "it convenes when `sabha chat` runs" in out and "is convening" not in out  # a terminal meeting's (fix27)
    with sqlite3.connect(home / "sessions" / "sabha.db") as db:
        [(status, payload)] = db.execute("SELECT status, payload FROM scheduled_work WHERE key = ?",
                                         (f"follow_up:decision:{first}",)).fetchall()
    assert status == "pending" and json.loads(payload)["reason"] == "the EU VAT rules changed"

    listed = sabha(home, "meetings", "list")[1]
    rows = {line.split()[0]: line for line in listed.splitlines()[1:]}
    assert " revisit " in rows[first] and " vetoed " in rows[second]
    code, out, _ = sabha(home, "decisions", "list", "--state", "vetoed")
    assert second in out and first not in out
    status = sabha(home, "status")[1]
    assert "Decisions: 1 vetoed, 1 revisit" in status and "waiting for the owner" not in status
    assert f"follow_up follow_up:decision:{first} (due " in status and "waits for `sabha chat`" in status


def test_the_terminal_chat_shows_the_decision_buttons_as_commands_and_runs_them(home: Path) -> None:
    result = run(["chat"], cwd=home, env=MINE, stdin="/meeting Should we hire?\n/decisions\n")
    assert result.returncode == 0, result.stderr
    found = re.search(r"\[Ratify: /ratify (m-\S+)\] \[Veto: /veto \1\] \[Revisit: /revisit \1\]", result.stdout)
    assert found is not None, result.stdout
