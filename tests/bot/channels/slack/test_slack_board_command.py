"""``/board`` in a channel on a real ``sabha run``: the command is recorded (keyed on Slack's ``trigger_id``) before
its echo is posted, so a command that cannot be stored is never echoed, and a repeated delivery of the same command
(Slack's retry, a Socket Mode envelope sent again) is echoed once and answered once; ``/board @finance ...`` makes
the thread finance's, as a post naming finance does, so a follow-up in it goes to finance."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.support.daemon import SabhaProcess
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.slack_socket import FakeSlack, SlackFormPoster, slash_command
from tests.support.slack import BOARD, FRIEND, NAMES, OWNER, answered, say, slack_env, slack_poster, write_slack_config
from tests.support.telegram import eventually


def echoes(slack: FakeSlack, text: str) -> list[str]:
    """The top-level echoes of ``/board <text>`` in the board channel (their ts)."""
    return [m.ts for m in slack.messages if m.channel == BOARD and m.thread_ts is None and f"/board {text}" in m.text]


def in_thread(slack: FakeSlack, ts: str, containing: str) -> list[str]:
    return [m.text for m in slack.messages if m.channel == BOARD and m.thread_ts == ts and containing in m.text]


async def test_a_board_command_that_cannot_be_stored_is_not_echoed_and_a_repeat_is_echoed_and_answered_once(
        tmp_path: Path, echo_model: EchoModel) -> None:
    async with FakeSlack(users=NAMES) as slack:
        sabha = SabhaProcess(write_slack_config(tmp_path, slack, echo_model), env=slack_env())
        try:
            await sabha.start()
            async with SlackFormPoster(f"http://127.0.0.1:{sabha.port}/slack/events") as forms:
                command = slash_command(OWNER, BOARD, "Q040 where do we stand?")
                blocker = sqlite3.connect(tmp_path / "sessions" / "sabha.db", isolation_level=None, timeout=30)
                try:
                    blocker.execute("BEGIN EXCLUSIVE")  # the state db cannot be written (as on a full disk)
                    status, _ = await forms.post(command)
                    assert status != 200, "acknowledged a command that could not be stored"
                    await sabha.wait_for_log(r"could not be stored|cannot write Sabha's data")  # it was refused
                    assert echoes(slack, "Q040") == [], "the command was echoed before it was stored"
                finally:
                    blocker.execute("ROLLBACK")
                    blocker.close()
                for _ in range(2):  # the same command again (same trigger_id), twice
                    status, body = await forms.post(command)
                    assert (status, body) == (200, "")
                [ts] = echoes(slack, "Q040")
                await eventually(lambda: in_thread(slack, ts, "Q040"), "the answer in the echo's thread")
                status, _ = await forms.post(slash_command(OWNER, BOARD, "Q041 a marker"))
                assert status == 200
                await eventually(lambda: answered(slack)["Q041"] == 1, "the marker answered")
                assert echoes(slack, "Q040") == [ts] and answered(slack)["Q040"] == 1, slack.texts(BOARD)
        finally:
            await sabha.close()


async def test_board_naming_an_advisor_makes_the_thread_theirs(tmp_path: Path, echo_model: EchoModel) -> None:
    async with FakeSlack(users=NAMES) as slack:
        sabha = SabhaProcess(write_slack_config(tmp_path, slack, echo_model), env=slack_env())
        try:
            await sabha.start()
            async with SlackFormPoster(f"http://127.0.0.1:{sabha.port}/slack/events") as forms, \
                    slack_poster(sabha) as poster:
                status, _ = await forms.post(slash_command(OWNER, BOARD, "@finance Q050 what is our runway?"))
                assert status == 200
                [ts] = echoes(slack, "@finance Q050")
                await eventually(lambda: in_thread(slack, ts, "Q050"), "finance's answer in the thread")
                assert in_thread(slack, ts, "Q050")[0].startswith("*💰 Finance*")
                await say(poster, BOARD, FRIEND, "Q051 and after the raise?", thread_ts=ts)  # names nobody
                await eventually(lambda: in_thread(slack, ts, "Q051"), "the follow-up's answer in the thread")
                assert in_thread(slack, ts, "Q051")[0].startswith("*💰 Finance*"), in_thread(slack, ts, "Q051")
        finally:
            await sabha.close()
