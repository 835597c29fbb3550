"""A decision posted in Slack with Ratify / Veto / Revisit buttons and ruled somewhere else: on a real ``sabha run``
with the fake Slack, a meeting called in Slack ends with its decision's buttons; ``sabha decisions ratify`` (another
process) ratifies it, and the Slack message is updated (``chat.update``) to its text with the verdict where its
buttons were, once. The table (migration 1125) on both backends: a post recorded once, only with a decision's
buttons."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from board.app import Board
from board.commands.decisions import decision_buttons
from board.envelope import Button
from bot.channels.slack.blocks import button_blocks
from bot.channels.slack.verdicts import SlackVerdicts, decision_of
from tests.bot.channels.slack.test_slack_buttons_meeting import MEETINGS, TOPIC, context_of, decision_message, rows
from tests.support.cli import REPO, run_sabha
from tests.support.daemon import SabhaProcess
from tests.support.fakes.slack_socket import FakeSlack
from tests.support.meeting_model import MeetingModel
from tests.support.slack import BOARD, NAMES, OWNER, say, slack_env, slack_poster, write_slack_config
from tests.support.telegram import eventually


async def test_a_decision_ratified_from_the_cli_updates_its_slack_message(tmp_path: Path) -> None:
    async with MeetingModel() as model, FakeSlack(users=NAMES) as slack:
        config = write_slack_config(tmp_path, slack, model, extra=MEETINGS)  # type: ignore[arg-type]
        sabha = SabhaProcess(config, env=slack_env())
        try:
            await sabha.start()
            async with slack_poster(sabha) as poster:
                called = await say(poster, BOARD, OWNER, f"/meeting {TOPIC}")
                ts = called["event"]["ts"]
                await eventually(lambda: decision_message(slack, ts) is not None, "the decision with its buttons",
                                 timeout=180)
                decision = decision_message(slack, ts)
                assert decision is not None
                [(meeting_id,)] = rows(tmp_path, "SELECT id FROM meetings")
                await eventually(lambda: rows(tmp_path, "SELECT subject, settled_verdict FROM slack_button_posts")
                                 == [(meeting_id, None)], "the decision's message recorded")
                body = decision.text

                await run_sabha(tmp_path, {**os.environ, **slack_env(), "PYTHONPATH": str(REPO)},
                                "decisions", "ratify", meeting_id, "--config", str(config))
                assert rows(tmp_path, "SELECT via FROM decision_rulings") == [("cli",)]
                await eventually(lambda: (context_of(decision) or "").startswith("*\u2705 Ratified*"),
                                 "the Slack message's buttons replaced by the verdict")
                assert not any(b.get("type") == "actions" for b in decision.blocks), "no buttons left"
                assert decision.text == body and body in decision.blocks[0]["text"]["text"]
                await eventually(lambda: rows(tmp_path, "SELECT settled_verdict FROM slack_button_posts")
                                 == [("ratified",)], "the update recorded")
                updates = [c for c in slack.calls_of("chat.update") if c.args.get("ts") == decision.ts]
                assert len(updates) == 1, "updated once, not at every look"
        finally:
            await sabha.close()


@pytest.mark.backends
async def test_a_decision_s_buttons_are_recorded_once_and_only_those(board: Board) -> None:
    verdicts = SlackVerdicts(board.parts.db, None, board.parts.decisions)  # type: ignore[arg-type]
    blocks = button_blocks("*Board decision* on Pune", decision_buttons("m-20261129-101500-ab12"))
    assert decision_of(blocks) == "m-20261129-101500-ab12"
    await verdicts.posted("C0BOARD", "1700000000.000002", "*Board decision* on Pune", blocks)
    await verdicts.posted("C0BOARD", "1700000000.000002", "*Board decision* on Pune (again)", blocks)
    await verdicts.posted("C0BOARD", "1700000000.000003", "Done?", button_blocks("Done?", (Button("Done", "/done 3"),)))
    stored = await board.parts.db.fetchall("SELECT subject, channel_id, ts, body, settled_verdict "
                                           "FROM slack_button_posts")
    assert [tuple(r[k] for k in ("subject", "channel_id", "ts", "body", "settled_verdict")) for r in stored] == [
        ("m-20261129-101500-ab12", "C0BOARD", "1700000000.000002", "*Board decision* on Pune (again)", None)]
    assert await verdicts.sweep() == 0, "a decision not found (or still proposed) changes nothing"
