"""Slack in Socket Mode on a real ``sabha run``: the daemon's slack_sdk ``SocketModeClient`` opens the fake's
WebSocket (``apps.connections.open`` with the app-level token), the fake sends envelopes the way Slack does.

An event is answered in its thread and its envelope acknowledged once stored; an envelope whose
acknowledgement was lost is sent again (``retry_attempt`` 1) on the next connection and answered once; a
dropped socket reconnects (logged) and the next message is answered; while the socket cannot come back, ``/readyz``
says so once the grace period has passed, and is ready again after the reconnect."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from aiohttp import ClientSession

from tests.support.daemon import SabhaProcess
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.slack_api import event_callback, message_event
from tests.support.fakes.slack_socket import APP_TOKEN, FakeSlack
from tests.support.slack import BOARD, NAMES, OWNER, answered, next_ts, slack_env, write_slack_config
from tests.support.telegram import eventually

SOCKET = ("  mode: socket", "  app_token: ${SLACK_APP_TOKEN}")


@asynccontextmanager
async def running_socket(root: Path, model: EchoModel) -> AsyncIterator[tuple[SabhaProcess, FakeSlack]]:
    """A fake Slack and a ``sabha run`` on it in Socket Mode, connected; both ended on the way out."""
    async with FakeSlack(users=NAMES) as slack:
        config = write_slack_config(root, slack, model, slack_extra=SOCKET)
        sabha = SabhaProcess(config, env={**slack_env(), "SLACK_APP_TOKEN": APP_TOKEN})
        try:
            await sabha.start()
            await slack.socket.wait_connections(1)
            yield sabha, slack
        finally:
            await sabha.close()


async def post(slack: FakeSlack, text: str, *, thread_ts: str | None = None) -> tuple[str, dict[str, Any]]:
    """The owner posts ``text`` in the board channel: the envelope's id and the event."""
    event = message_event(BOARD, OWNER, text, next_ts(), thread_ts=thread_ts)
    envelope_id = await slack.socket.send("events_api", event_callback(event))
    return envelope_id, event


def in_thread(slack: FakeSlack, ts: str, containing: str) -> list[str]:
    return [m.text for m in slack.messages if m.channel == BOARD and m.thread_ts == ts and containing in m.text]


async def test_an_event_over_the_socket_is_answered_in_its_thread(tmp_path: Path, echo_model: EchoModel) -> None:
    async with running_socket(tmp_path, echo_model) as (sabha, slack):
        envelope_id, event = await post(slack, "Q001 where do we stand?")
        await slack.socket.wait_ack(envelope_id)
        await eventually(lambda: in_thread(slack, event["ts"], "Q001"), "the answer in the thread")
        assert slack.socket.acks[envelope_id] == 1
        assert [c.method for c in slack.calls if c.method == "apps.connections.open"] == ["apps.connections.open"]
        await sabha.wait_for_log(r"Slack Socket Mode connected")
        # no request URL in socket mode: the events path is not served
        assert "events at" in sabha.log and "(socket, allowlist)" in sabha.log


async def test_an_envelope_whose_ack_was_lost_is_answered_once(tmp_path: Path, echo_model: EchoModel) -> None:
    async with running_socket(tmp_path, echo_model) as (sabha, slack):
        envelope_id, event = await post(slack, "Q002 first try")
        await slack.socket.wait_ack(envelope_id)  # stored; then the socket breaks before Slack saw the ack
        await slack.socket.drop()
        await slack.socket.wait_connections(2)
        await slack.socket.redeliver(envelope_id)  # retry_attempt 1, on the new connection
        await eventually(lambda: slack.socket.acks.get(envelope_id, 0) == 2, "the redelivery acknowledged")
        await sabha.wait_for_log(r"again \(Slack's retry 1, timeout\)")
        # a later post in the same thread (same lane) is answered after anything queued before it
        await post(slack, "Q003 after the retry", thread_ts=event["ts"])
        await eventually(lambda: answered(slack)["Q003"] == 1, "the later post answered")
        assert answered(slack)["Q002"] == 1, slack.texts()


async def test_a_dropped_socket_reconnects_and_the_next_message_is_answered(tmp_path: Path,
                                                                          echo_model: EchoModel) -> None:
    async with running_socket(tmp_path, echo_model) as (sabha, slack):
        await sabha.wait_for_log(r"Slack Socket Mode connected")
        await slack.socket.drop()
        await slack.socket.wait_connections(2)
        await sabha.wait_for_log(r"Slack Socket Mode reconnected")
        envelope_id, event = await post(slack, "Q004 still there?")
        await slack.socket.wait_ack(envelope_id)
        await eventually(lambda: in_thread(slack, event["ts"], "Q004"), "the answer after the reconnect")
        # Slack's own refresh: a disconnect envelope, then a new connection
        await slack.socket.refresh()
        await slack.socket.wait_connections(3)
        await sabha.wait_for_log(r"Slack asked Sabha to reconnect \(refresh_requested\)")
        envelope_id, event = await post(slack, "Q005 and now?")
        await slack.socket.wait_ack(envelope_id)
        await eventually(lambda: in_thread(slack, event["ts"], "Q005"), "the answer after the refresh")
        assert answered(slack) == {"Q004": 1, "Q005": 1}


async def test_readiness_says_while_the_socket_is_down_and_recovers(tmp_path: Path, echo_model: EchoModel) -> None:
    async with running_socket(tmp_path, echo_model) as (sabha, slack), ClientSession() as http:
        url = f"http://127.0.0.1:{sabha.port}/readyz"

        async def readiness() -> tuple[int, str]:
            async with http.get(url) as response:
                return response.status, await response.text()

        await sabha.wait_for_log(r"Slack Socket Mode connected")
        assert (await readiness())[0] == 200
        slack.socket.refusing = True  # Slack's socket servers away: the socket drops and cannot come back
        await slack.socket.drop()
        await sabha.wait_for_log(r"Slack Socket Mode connection lost; reconnecting")
        got: list[tuple[int, str]] = []

        async def unready() -> bool:
            got.append(await readiness())
            return got[-1][0] == 503

        await eventually(unready, "readiness saying the socket is down (after its grace period)")
        assert "Socket Mode disconnected" in got[-1][1], got[-1]
        slack.socket.refusing = False
        await slack.socket.wait_connections(2)
        await sabha.wait_for_log(r"Slack Socket Mode reconnected")
        await eventually(lambda: readiness_ok(http, url), "ready again")
        envelope_id, event = await post(slack, "Q006 back?")
        await slack.socket.wait_ack(envelope_id)
        await eventually(lambda: in_thread(slack, event["ts"], "Q006"), "the answer after the outage")


async def readiness_ok(http: ClientSession, url: str) -> bool:
    async with http.get(url) as response:
        return response.status == 200
