"""``/board`` on a real ``sabha run``: a signed slash-command post (bolt-python's body shape) is a message to the
board in that channel: the question is posted as a new message, stored, acknowledged, and answered in its
thread; ``/board status`` is ``/status``; a stranger is refused where only they see it and costs nothing. In
Socket Mode the same command comes as a ``slash_commands`` envelope (python-slack-sdk's shape) and is answered
the same way."""

from __future__ import annotations

import json
from pathlib import Path

from tests.bot.channels.slack.test_slack_socket import running_socket
from tests.support.daemon import SabhaProcess
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.slack_socket import FakeSlack, SlackFormPoster, fixture, slash_command
from tests.support.slack import BOARD, FINANCE, NAMES, OWNER, STRANGER, answered, slack_env, write_slack_config
from tests.support.telegram import eventually


def top_level(slack: FakeSlack, channel: str, containing: str) -> list[str]:
    """The answers containing ``containing`` in the thread of the question ``/board`` posted in ``channel``."""
    asked = [m.ts for m in slack.messages if m.channel == channel and m.thread_ts is None
             and containing in m.text and "/board" in m.text]
    return [m.text for m in slack.messages if m.channel == channel and asked and m.thread_ts == asked[0]
            and containing in m.text]


async def test_board_slash_command_is_a_message_to_the_board_in_that_channel(tmp_path: Path,
                                                                           echo_model: EchoModel) -> None:
    async with FakeSlack(users=NAMES) as slack:
        sabha = SabhaProcess(write_slack_config(tmp_path, slack, echo_model), env=slack_env())
        try:
            await sabha.start()
            async with SlackFormPoster(f"http://127.0.0.1:{sabha.port}/slack/events") as forms:
                status, body = await forms.post(slash_command(OWNER, BOARD, "Q020 where do we stand?"))
                assert (status, body) == (200, "")
                [asked] = [m for m in slack.messages if m.channel == BOARD]
                assert asked.text == f"<@{OWNER}>: /board Q020 where do we stand?" and asked.thread_ts is None
                await eventually(lambda: top_level(slack, BOARD, "Q020"), "the answer in the board channel")
                status, _ = await forms.post(slash_command(OWNER, FINANCE, "Q021 runway?"))
                assert status == 200
                await eventually(lambda: top_level(slack, FINANCE, "Q021"), "finance's answer in its channel")
                assert top_level(slack, FINANCE, "Q021")[0].startswith("*💰 Finance*")
                status, _ = await forms.post(slash_command(OWNER, BOARD, "status"))
                assert status == 200
                await eventually(lambda: [m for m in slack.messages if m.thread_ts and "slack: running" in m.text],
                                 "the status, as /status, in its thread")
                calls = echo_model.calls
                status, body = await forms.post(slash_command(STRANGER, BOARD, "Q022 let me in"))
                assert status == 200 and json.loads(body)["response_type"] == "ephemeral"
                assert "only the board's members" in json.loads(body)["text"]
                status, body = await forms.post(slash_command(OWNER, "C0RANDOM", "Q023 here?"))
                assert "not the board's" in json.loads(body)["text"]
                status, body = await forms.post(slash_command(OWNER, BOARD, ""))
                assert "/board meeting on pricing" in json.loads(body)["text"]
                assert answered(slack) == {"Q020": 1, "Q021": 1} and echo_model.calls == calls
        finally:
            await sabha.close()


async def test_board_over_socket_mode(tmp_path: Path, echo_model: EchoModel) -> None:
    async with running_socket(tmp_path, echo_model) as (_, slack):
        payload = dict(fixture("socket_mode_envelopes.json")["envelopes"][0]["payload"])
        payload.update(command="/board", text="Q030 over the socket", user_id=OWNER, channel_id=BOARD)
        envelope_id = await slack.socket.send("slash_commands", payload)
        await slack.socket.wait_ack(envelope_id)
        await eventually(lambda: top_level(slack, BOARD, "Q030"), "the answer in the board channel")
        assert answered(slack) == {"Q030": 1}
