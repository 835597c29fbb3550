"""The receipt in the message's trace on the channels without a webhook's request: Discord's gateway, Slack's Socket
Mode and the web chat's page (issue 44, "Traces"; :mod:`bot.channels.receipt`). Each on a real ``sabha run`` with
tracing on and the local OTLP/HTTP receiver: what comes in opens a ``receipt`` span (``sabha.receipt.via``
``gateway`` / ``socket`` / ``page``), the intake's ``claim`` is its child, and the answer's ``message`` span, taken
up from the stored row, joins the same trace; the ledger row of its model call carries that trace id. Before the
receipt span these traces began at ``claim``, with no receipt above it."""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path

from aiohttp import ClientSession

from tests.bot.channels.slack.test_slack_socket import SOCKET
from tests.bot.channels.web.test_web_chat_kill import sign_in
from tests.support.daemon import SabhaProcess
from tests.support.discord import OWNER as DISCORD_OWNER
from tests.support.discord import answered as discord_answered
from tests.support.discord import env as discord_env
from tests.support.discord import places
from tests.support.discord import write_config as discord_config
from tests.support.fakes.discord_api import FakeDiscord
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.otlp_receiver import OtlpReceiver
from tests.support.fakes.slack_api import event_callback, message_event
from tests.support.fakes.slack_socket import APP_TOKEN, FakeSlack
from tests.support.slack import BOARD, NAMES, next_ts, slack_env, write_slack_config
from tests.support.slack import OWNER as SLACK_OWNER
from tests.support.slack import answered as slack_answered
from tests.support.telegram import eventually
from tests.support.web_chat import new_id, post_message, write_chat_config
from tests.system.test_receipt_trace import one_trace_from_receipt_to_the_model, receipt_of


def telemetry(receiver: OtlpReceiver) -> list[str]:
    return ["telemetry:", "  enabled: true", f"  endpoint: {receiver.endpoint}/v1/traces"]


def ledger_traces(root: Path) -> set[str]:
    with sqlite3.connect(root / "sessions" / "sabha.db") as db:
        return {row[0] for row in db.execute("SELECT trace_id FROM llm_calls")}


async def test_a_discord_message_from_the_gateway_is_one_trace_from_its_receipt_to_the_model(
        tmp_path: Path, echo_model: EchoModel) -> None:
    async with OtlpReceiver() as receiver, FakeDiscord() as server:
        fake = places(server)
        sabha = SabhaProcess(discord_config(tmp_path, fake, echo_model.base_url, extra=telemetry(receiver)),
                             env=discord_env())
        try:
            await sabha.start()
            await sabha.wait_for_log(r"discord: connected to the gateway")
            fake.user_says(fake.dm_channel(DISCORD_OWNER), DISCORD_OWNER, "Q001 what should we price the pilot at?")
            await fake.wait_for(lambda: discord_answered(fake)["Q001"] == 1, "the Discord answer")
            assert await sabha.signal(signal.SIGTERM) == 0  # tracing stops after the channels: the rest is sent
        finally:
            await sabha.close()
    receipt = receipt_of(receiver, "discord")
    assert receipt.span.attributes["sabha.receipt.via"] == "gateway"
    assert receipt.span.attributes["sabha.updates.count"] >= 1
    assert ledger_traces(tmp_path) == {one_trace_from_receipt_to_the_model(receipt, "openai")}


async def test_a_slack_socket_mode_envelope_is_one_trace_from_its_receipt_to_the_model(
        tmp_path: Path, echo_model: EchoModel) -> None:
    async with OtlpReceiver() as receiver, FakeSlack(users=NAMES) as slack:
        config = write_slack_config(tmp_path, slack, echo_model, slack_extra=SOCKET, extra=telemetry(receiver))
        sabha = SabhaProcess(config, env={**slack_env(), "SLACK_APP_TOKEN": APP_TOKEN})
        try:
            await sabha.start()
            await slack.socket.wait_connections(1)
            body = event_callback(message_event(BOARD, SLACK_OWNER, "Q001 what should we price the pilot at?",
                                                next_ts()))
            await slack.socket.wait_ack(await slack.socket.send("events_api", body))
            await eventually(lambda: slack_answered(slack)["Q001"] >= 1, "the Slack answer", 120)
            assert await sabha.signal(signal.SIGTERM) == 0
        finally:
            await sabha.close()
    receipt = receipt_of(receiver, "slack")
    assert receipt.span.attributes["sabha.receipt.via"] == "socket"
    assert ledger_traces(tmp_path) == {one_trace_from_receipt_to_the_model(receipt, "openai")}


async def test_a_web_chat_message_is_one_trace_from_its_receipt_to_the_model(
        tmp_path: Path, echo_model: EchoModel) -> None:
    async with OtlpReceiver() as receiver:
        config = write_chat_config(tmp_path, echo_model)
        config.write_text(config.read_text(encoding="utf-8") + "\n".join(telemetry(receiver)) + "\n",
                          encoding="utf-8")
        sabha = SabhaProcess(config, env={})
        try:
            await sabha.start()
            base = f"http://127.0.0.1:{sabha.port}"
            async with ClientSession() as http:
                cookie, csrf = await sign_in(http, base, config)
                status, _ = await post_message(http, base, "finance", "Q001 what should we price the pilot at?",
                                               new_id(), csrf=csrf, cookie=cookie)
            assert status == 202
            await eventually(lambda: ledger_traces(tmp_path), "the answer's model call on the ledger", 120)
            assert await sabha.signal(signal.SIGTERM) == 0
        finally:
            await sabha.close()
    receipt = receipt_of(receiver, "web")
    assert receipt.span.attributes["sabha.receipt.via"] == "page"
    assert ledger_traces(tmp_path) == {one_trace_from_receipt_to_the_model(receipt, "openai")}
