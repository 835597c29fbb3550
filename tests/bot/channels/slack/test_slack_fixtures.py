"""Payloads other projects wrote (bolt-python's tests, Slack's docs; tests/data/slack/SOURCES.md), replayed signed to
a real ``sabha run``: a person's post and a thread broadcast are answered in their threads; bots' posts and a
reaction cost nothing; an edit gets the one "edits are not read" line; a deletion is logged; Slack's URL
verification is answered with its challenge."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.fakes.echo_model import EchoModel
from tests.support.slack import running_slack
from tests.support.telegram import eventually

DATA = Path(__file__).resolve().parents[3] / "data" / "slack"


def body(name: str) -> bytes:
    return (DATA / name).read_bytes()


async def test_payloads_from_bolt_python_and_slack_s_docs_replayed_to_a_real_daemon(tmp_path: Path,
                                                                                    echo_model: EchoModel) -> None:
    async with running_slack(tmp_path, echo_model, allowed=("W111", "U111", "U222"), board="C111") as (
            sabha, slack, poster):
        status, text = await poster.post(body("url_verification.json"))
        challenge = json.loads(body("url_verification.json"))["challenge"]
        assert (status, json.loads(text)) == (200, {"challenge": challenge})
        for name in ("bot_message.json", "classic_bot_message.json", "reaction_added.json", "user_message.json",
                     "thread_broadcast.json", "message_changed.json", "message_deleted.json"):
            assert (await poster.post(body(name)))[0] == 200, name
        await eventually(lambda: len(slack.messages) >= 3, "two answers and the edit line")
        threads = {m.thread_ts: m.text for m in slack.messages}
        assert "Hi there! Thanks for sharing the info!" in threads["1610261659.001400"]
        assert "Hi there!" in threads["1633663824.000500"], "the broadcast answered in its thread"
        assert "I don't read edits" in threads["1665102338.901939"]
        assert echo_model.calls == 2, "bots' posts, the reaction, the edit and the deletion cost no model call"
        assert any("C111/1665368619.804829 was deleted" in line for line in sabha.lines)
        assert len(slack.messages) == 3
