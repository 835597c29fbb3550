"""A board meeting called from Discord on a real ``sabha run`` (the offline board, two rounds) against the fake
Discord: it runs in a thread of its own opened beside the conversation it was called from, with a pointer there;
every statement is posted in the thread, then the decision with its Ratify / Veto / Revisit buttons (Discord
components). A member's press on Ratify is refused with a message only they see and changes nothing; the owner's
press is stored, answered within Discord's 3 seconds (a deferred update), ratifies the decision (``sabha
decisions``), its outcome comes as the press's follow-up and the decision's buttons become one that says
"Ratified". The presses are Discord's documented sample component interaction with this server's ids."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.cli import REPO, run_sabha
from tests.support.discord import FINANCE, FRIEND, OWNER, env, places
from tests.support.discord_board import offline_config, running
from tests.support.fakes.discord_api import SentMessage
from tests.support.fakes.discord_interactions import FakeDiscordMore

ANSWER_WITHIN_S = 3.0  # Discord's rule for an interaction's first response


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscordMore]:
    async with FakeDiscordMore() as server:
        yield places(server)  # type: ignore[misc]


def _statements(db: Path) -> list[sqlite3.Row]:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        return conn.execute("SELECT meeting_id, round, role, text FROM meeting_statements ORDER BY id").fetchall()


async def test_a_meeting_runs_in_its_thread_and_only_the_owners_ratify_counts(
        tmp_path: Path, fake: FakeDiscordMore) -> None:
    config = offline_config(tmp_path, fake)
    sabha = await running(config, fake)
    try:
        iid = fake.slash(FINANCE, OWNER, "meeting", {"topic": "Should we open a Pune office?"}, name="Ada")
        await fake.wait_for(lambda: any("Minutes" in m.content for m in fake.sent), "the meeting's minutes", 300)
        assert fake.extras.response_to(iid) is not None
        assert len(fake.opened_threads) == 1, sabha.log[-6000:]
        [thread] = fake.opened_threads
        assert fake.channels[thread]["parent_id"] == FINANCE  # beside the channel it was called in
        assert fake.channels[thread]["name"] == "🏛 Should we open a Pune office?"
        assert any(f"<#{thread}>" in m.content for m in fake.sent if m.channel_id == FINANCE)  # the pointer

        posted = fake.in_channel(thread)
        statements = _statements(tmp_path / "sessions" / "sabha.db")
        meeting_id = statements[0]["meeting_id"]
        assert len({(s["round"], s["role"]) for s in statements}) == len(statements) >= 2
        headed = [m for m in posted if "board meeting, round" in m.content.splitlines()[0]]
        assert len(headed) == len(statements)  # one post per statement, nothing twice
        for s in statements:  # each statement in the thread, under its round
            first_line = s["text"].strip().splitlines()[0][:60]
            assert sum(f"round {s['round']}" in m.content.splitlines()[0] and first_line in m.content
                       for m in headed) >= 1, first_line
        decision = _decision_message(posted)
        labels = [c["label"] for row in decision.payload["components"] for c in row["components"]]
        assert labels == ["Ratify", "Veto", "Revisit"]

        member = fake.press(decision, "Ratify", FRIEND, name="Bo")
        await fake.extras.wait_for(lambda: fake.extras.response_to(member) is not None)
        refused = fake.extras.response_to(member)
        assert refused is not None and refused.type == 4 and refused.ephemeral  # only the presser sees it
        assert refused.data["content"] == "Only the board's owner can /ratify; nothing changed."
        assert refused.after_s is not None and refused.after_s < ANSWER_WITHIN_S

        owner = fake.press(decision, "Ratify", OWNER, name="Ada")
        await fake.extras.wait_for(lambda: any(f.token == f"interaction-token-{owner}" for f in fake.extras.followups))
        pressed = fake.extras.response_to(owner)
        assert pressed is not None and pressed.type == 6  # a deferred update: the outcome follows
        assert pressed.after_s is not None and pressed.after_s < ANSWER_WITHIN_S
        [outcome] = [f for f in fake.extras.followups if f.token == f"interaction-token-{owner}"]
        assert "ratified" in outcome.data["content"].lower()
        await fake.wait_for(lambda: decision.id in fake.component_edits, "the decision's buttons saying the verdict")
        [settled] = [c for row in decision.payload["components"] for c in row["components"]]
        assert settled["label"].endswith("Ratified")  # one button now: a press shows the decision
    finally:
        await sabha.close()
    assert "Traceback" not in sabha.log, sabha.log
    out, _ = await run_sabha(tmp_path, {**os.environ, "PYTHONPATH": str(REPO), **env()}, "decisions", "list",
                             "--config", str(config))
    line = next(line for line in out.splitlines() if meeting_id in line)
    assert "ratified" in line
    assert not any(f.token == f"interaction-token-{member}" for f in fake.extras.followups)  # nothing came of it


def _decision_message(posted: list[SentMessage]) -> SentMessage:
    return next(m for m in posted if m.payload.get("components"))
