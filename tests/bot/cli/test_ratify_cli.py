"""``sabha decisions list|show|ratify|veto|revisit`` through the real CLI (the offline model), the
decision state in ``sabha meetings list``, and the terminal showing buttons as the commands they send."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from board.storage import StateURL, open_database, parse_state_url
from tests.bot.cli.test_cli import run

REPO = Path(__file__).resolve().parents[3]
MINE = {"PYTHONPATH": str(REPO)}


@pytest.fixture
def home(tmp_path: Path, state_url: StateURL | None) -> Path:
    """A board made by ``sabha init``; its state on the test's backend (``state.url`` in its sabha.yaml)."""
    result = run(["init", str(tmp_path / "proj")], cwd=tmp_path, env=MINE)
    assert result.returncode == 0, result.stderr
    if state_url is not None:
        with (tmp_path / "proj" / "sabha.yaml").open("a") as config:
            config.write(f"\nstate:\n  url: {state_url}\n")
    return tmp_path / "proj"


async def scheduled(home: Path, state_url: StateURL | None, key: str) -> list[tuple[str, str]]:
    """(status, payload) of the scheduled_work rows of ``key``, read from the board's state."""
    url = state_url or parse_state_url("", data_dir=home / "sessions", env={})
    from board.app import BOARD_MIGRATIONS
    from bot.app import all_migrations

    async with await open_database(url, [*BOARD_MIGRATIONS, *all_migrations()]) as db:
        rows = await db.fetchall("SELECT status, payload FROM scheduled_work WHERE key = ?", (key,))
    return [(r["status"], r["payload"]) for r in rows]


def sabha(home: Path, *args: str) -> tuple[int, str, str]:
    result = run(list(args), cwd=home, env=MINE)
    return result.returncode, result.stdout, result.stderr


def meeting(home: Path, topic: str) -> str:
    code, _, err = sabha(home, "meeting", topic)
    assert code == 0, err
    # stdout is a pipe: the live lines, this one among them, are on stderr (issue 38)
    found = re.search(r"== Decision (m-\S+) is proposed: sabha decisions ratify (m-\S+)", err)
    assert found is not None and found.group(1) == found.group(2), err
    return found.group(1)


@pytest.mark.backends
async def test_decisions_from_the_terminal(home: Path, state_url: StateURL | None) -> None:
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
    [(status, payload)] = await scheduled(home, state_url, f"follow_up:decision:{first}")
    assert status == "pending" and json.loads(payload)["reason"] == "the EU VAT rules changed"

    listed = sabha(home, "meetings", "list")[1]
    rows = {line.split()[0]: line for line in listed.splitlines()[1:]}
    assert " revisit " in rows[first] and " vetoed " in rows[second]
    code, out, _ = sabha(home, "decisions", "list", "--state", "vetoed")
    assert second in out and first not in out
    if state_url is not None:
        return  # `sabha status` on a PostgreSQL state.url comes with the replicas' status (bot/cli/ops.py)
    status = sabha(home, "status")[1]
    assert "Decisions: 1 vetoed, 1 revisit" in status and "waiting for the owner" not in status
    assert f"follow_up follow_up:decision:{first} (due " in status and "waits for `sabha chat`" in status


def test_the_terminal_chat_shows_the_decision_buttons_as_commands_and_runs_them(home: Path) -> None:
    result = run(["chat"], cwd=home, env=MINE, stdin="/meeting Should we hire?\n/decisions\n")
    assert result.returncode == 0, result.stderr
    found = re.search(r"\[Ratify: /ratify (m-\S+)\] \[Veto: /veto \1\] \[Revisit: /revisit \1\]", result.stdout)
    assert found is not None, result.stdout
