"""A meeting called in Slack runs in its thread on a real ``sabha run`` (Events API, the fake Slack, the model
that holds a real meeting): each round's statements, then the decision with Block Kit Ratify / Veto / Revisit
buttons. A member's press is refused with an ephemeral line and changes nothing; the owner's press (a signed
``block_actions`` post, bolt-python's body shape) is acknowledged once stored, ratifies (the db and ``sabha
decisions`` say so), the pressed message shows who pressed what, then the verdict instead of its buttons, and the
outcome is posted in the thread."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from tests.support.cli import REPO, run_sabha
from tests.support.daemon import SabhaProcess
from tests.support.fakes.slack_api import FakeSlackMessage
from tests.support.fakes.slack_socket import FakeSlack, SlackFormPoster, block_actions
from tests.support.meeting_model import MeetingModel, statement_marker
from tests.support.slack import BOARD, FRIEND, NAMES, OWNER, say, slack_env, slack_poster, write_slack_config
from tests.support.telegram import SPECIALISTS, eventually

TOPIC = "Should we open a Pune office?"
MEETINGS = ("board:", "  meetings:", "    max_turns_per_agent: 1", "    agent_timeout_s: 600",
            "    max_duration_s: 3600", "    budget_usd: 100")


def rows(root: Path, sql: str, *params: object) -> list[tuple[Any, ...]]:
    with sqlite3.connect(root / "sessions" / "sabha.db") as db:
        return db.execute(sql, params).fetchall()


def thread_of(slack: FakeSlack, ts: str) -> list[FakeSlackMessage]:
    return [m for m in slack.messages if m.channel == BOARD and m.thread_ts == ts]


def decision_message(slack: FakeSlack, ts: str) -> FakeSlackMessage | None:
    for m in thread_of(slack, ts):
        if m.text.startswith("*Board decision*") and m.blocks and any(b.get("type") == "actions" for b in m.blocks):
            return m
    return None


def buttons_of(message: FakeSlackMessage) -> dict[str, str]:
    [actions] = [b for b in message.blocks if b.get("type") == "actions"]
    return {e["text"]["text"]: e["value"] for e in actions["elements"]}


def context_of(message: FakeSlackMessage) -> str | None:
    """The context line where the message's buttons were (None: none)."""
    found = [b for b in message.blocks or () if b.get("type") == "context"]
    return str(found[0]["elements"][0]["text"]) if found else None


def as_pressed(message: FakeSlackMessage) -> dict[str, Any]:
    return {"ts": message.ts, "thread_ts": message.thread_ts, "text": message.text, "blocks": message.blocks}


async def test_a_meeting_in_its_thread_and_only_the_owners_ratify_counts(tmp_path: Path) -> None:
    async with MeetingModel() as model, FakeSlack(users=NAMES) as slack:
        config = write_slack_config(tmp_path, slack, model, extra=MEETINGS)  # type: ignore[arg-type]
        sabha = SabhaProcess(config, env=slack_env())
        try:
            await sabha.start()
            async with slack_poster(sabha) as poster, SlackFormPoster(poster.url) as forms:
                called = await say(poster, BOARD, OWNER, f"/meeting {TOPIC}")
                ts = called["event"]["ts"]
                await eventually(lambda: decision_message(slack, ts) is not None, "the decision with its buttons",
                                 timeout=180)
                await eventually(lambda: any(m.text.startswith("*Minutes*") for m in thread_of(slack, ts)),
                                 "the minutes")
                rounds = [m.text for m in thread_of(slack, ts) if m.text.startswith("*Round 1*")]
                said = "\n".join(rounds)
                for role in SPECIALISTS:  # each statement once, in the round's message (the minutes repeat them)
                    assert said.count(statement_marker(role, 1)) == 1, [m.text[:80] for m in thread_of(slack, ts)]
                decision = decision_message(slack, ts)
                assert decision is not None and "Board decision" in decision.text
                [(meeting_id,)] = rows(tmp_path, "SELECT id FROM meetings")
                buttons = buttons_of(decision)
                assert buttons == {"Ratify": f"/ratify {meeting_id}", "Veto": f"/veto {meeting_id}",
                                   "Revisit": f"/revisit {meeting_id}"}
                assert all(m.thread_ts == ts for m in slack.messages if m.channel == BOARD), "all in one thread"

                # a member's press: refused where only they see it, nothing stored, nothing changed
                status, _ = await forms.press(block_actions(FRIEND, BOARD, as_pressed(decision),
                                                            buttons["Ratify"], "Ratify"))
                assert status == 200
                await eventually(lambda: slack.ephemerals, "the member's refusal")
                [refusal] = slack.ephemerals
                assert refusal["user"] == FRIEND and refusal["thread_ts"] == ts
                assert refusal["text"] == "Only the board's owner can /ratify; nothing changed."
                assert rows(tmp_path, "SELECT ratification FROM meetings") == [(None,)]
                assert len(decision.versions) == 1, "the pressed message is unchanged"

                # the owner's press ratifies; the message says who pressed; the outcome comes in the thread
                status, _ = await forms.press(block_actions(OWNER, BOARD, as_pressed(decision),
                                                            buttons["Ratify"], "Ratify"))
                assert status == 200
                await eventually(lambda: rows(tmp_path, "SELECT ratification FROM meetings") == [("ratified",)],
                                 "the decision ratified")
                assert rows(tmp_path, "SELECT by_id, via FROM decision_rulings") == [(f"slack:{OWNER}", "slack")]
                await eventually(lambda: (context_of(decision) or "").startswith("*\u2705 Ratified*"),
                                 "the message's buttons replaced by its verdict")
                updates = [json.dumps(c.args.get("blocks")) for c in slack.calls_of("chat.update")
                           if c.args.get("ts") == decision.ts]
                assert any(f"<@{OWNER}> pressed *Ratify*" in u for u in updates), "it said who pressed first"
                assert len(updates) == 2 and not any(b.get("type") == "actions" for b in decision.blocks)
                await eventually(lambda: any("atified" in m.text and m is not decision for m in thread_of(slack, ts)),
                                 "the ratification's reply in the thread")
        finally:
            await sabha.close()
    out, _ = await run_sabha(tmp_path, {**os.environ, **slack_env(), "PYTHONPATH": str(REPO)},
                             "decisions", "list", "--json", "--config", str(config))
    listed = json.loads(out)
    assert len(listed) == 1 and "ratified" in json.dumps(listed[0]), out
