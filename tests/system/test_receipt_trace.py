"""The receipt in the message's trace (issue 44, "Traces"): a real ``sabha run`` with tracing on, Telegram polling
the fake Bot API and WhatsApp's signed webhook on the fake Graph API, the offline model, the local OTLP/HTTP
receiver.

A message is received (the poll's batch, the webhook's request: ``receipt``), stored (``claim``), and answered later
in its conversation's lane from the stored row; the row keeps the receipt's trace context
(``inbound_messages.traceparent``), so what the receiver decodes is one trace per message: ``receipt -> claim`` and
``receipt -> message -> answer -> turn -> chat``, and the ledger row of its model call carries the same trace id."""

from __future__ import annotations

import re
import signal
import sqlite3
from pathlib import Path

from aiohttp import ClientSession, ClientTimeout

from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.otlp_receiver import OtlpReceiver, SpanNode, render
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import OWNER as TG_OWNER
from tests.support.telegram import TOKEN, eventually
from tests.support.whatsapp import APP_SECRET, NUMBER_ID, VERIFY_TOKEN, post, text_notification
from tests.support.whatsapp import OWNER as WA_OWNER
from tests.system.test_tracing_daemon import write_config as whatsapp_only_config


def whatsapp_and_telemetry(graph: FakeGraphAPI, receiver: OtlpReceiver) -> list[str]:
    return ["llm:", "  model: offline",
            "whatsapp:", f'  phone_number_id: "{NUMBER_ID}"', "  access_token: ${WHATSAPP_ACCESS_TOKEN}",
            "  app_secret: ${WHATSAPP_APP_SECRET}", f"  verify_token: {VERIFY_TOKEN}",
            f"  graph_base_url: {graph.base_url}", f"  api_version: {graph.version}",
            f'  allowed_numbers: ["{WA_OWNER}"]',
            "telemetry:", "  enabled: true", f"  endpoint: {receiver.endpoint}/v1/traces"]


def receipt_of(receiver: OtlpReceiver, channel: str) -> SpanNode:
    """The one ``receipt`` tree of ``channel`` that stored a message (a poll that brought none opens no span; a
    webhook of statuses stores nothing)."""
    found = [n for n in receiver.trees() if n.span.name == "receipt" and n.span.attributes["sabha.channel"] == channel
             and any(c.span.attributes.get("sabha.messages.stored") for c in n.named("claim"))]
    assert len(found) == 1, [render(n) for n in receiver.trees()]
    return found[0]


def one_trace_from_receipt_to_the_model(receipt: SpanNode, provider: str = "offline") -> str:
    """``receipt -> claim`` and ``receipt -> message -> answer -> turn -> chat`` (a call to ``provider``), all of one
    trace; its id."""
    print("\n".join(render(receipt)))
    trace = receipt.span.trace_id
    assert {s.trace_id for s in receipt.walk()} == {trace}
    [claim] = receipt.named("claim")
    assert claim.span.attributes["sabha.messages.stored"] == 1
    assert claim.span.attributes["sabha.messages.duplicates"] == 0
    [message] = receipt.named("message")
    assert message.span.parent_id == receipt.span.span_id and message.span.links == (trace,)  # child, and linked
    [answer] = message.named("answer")
    [turn] = answer.named("turn")
    [chat] = turn.named("chat ")
    assert chat.span.attributes["gen_ai.provider.name"] == provider
    assert message.named("send")
    return trace


async def test_receipt_claim_and_answer_are_one_trace_on_telegram_and_whatsapp(
        tmp_path: Path, fake: FakeTelegramAPI, fake_graph: FakeGraphAPI) -> None:
    async with OtlpReceiver() as receiver:
        config = write_config(tmp_path, fake, None, extra=whatsapp_and_telemetry(fake_graph, receiver))
        sabha = SabhaProcess(config, env={"TELEGRAM_BOT_TOKEN": TOKEN, "WHATSAPP_ACCESS_TOKEN": fake_graph.token,
                                          "WHATSAPP_APP_SECRET": APP_SECRET})
        await sabha.start()
        try:
            fake.push_text(TG_OWNER, TG_OWNER, "What should we price the pilot at?")
            await eventually(lambda: fake.sent_to(TG_OWNER), "the Telegram answer", 120)
            async with ClientSession(timeout=ClientTimeout(total=60)) as http:
                status, _ = await post(http, f"http://127.0.0.1:{sabha.port}/whatsapp/webhook",
                                       text_notification(WA_OWNER, "And the pilot's length?"))
            assert status == 200
            await eventually(lambda: any(s.user == WA_OWNER for s in fake_graph.sent), "the WhatsApp answer", 120)
            assert await sabha.signal(signal.SIGTERM) == 0  # tracing stops after the channels: what is left is sent
        finally:
            await sabha.close()

    telegram = receipt_of(receiver, "telegram")
    assert telegram.span.attributes["sabha.receipt.via"] == "poll" and telegram.span.attributes["sabha.updates.count"]
    whatsapp = receipt_of(receiver, "whatsapp")
    assert whatsapp.span.attributes["sabha.receipt.via"] == "webhook"
    assert whatsapp.span.attributes["http.response.status_code"] == 200
    assert whatsapp.span.attributes["http.request.body.size"] > 0
    traces = {one_trace_from_receipt_to_the_model(telegram), one_trace_from_receipt_to_the_model(whatsapp)}
    assert len(traces) == 2

    with sqlite3.connect(tmp_path / "sessions" / "sabha.db") as db:
        ledger = {row[0] for row in db.execute("SELECT trace_id FROM llm_calls")}
        stored = dict(db.execute("SELECT channel, traceparent FROM inbound_messages").fetchall())
    assert ledger == traces  # each message's model call is on the ledger under its receipt's trace id
    assert {channel: text.split("-")[1] for channel, text in stored.items()} == {
        "telegram": telegram.span.trace_id, "whatsapp": whatsapp.span.trace_id}
    spans = [s for tree in (telegram, whatsapp) for s in tree.walk()]
    said = ("What should we price", "pilot's length", str(TG_OWNER), WA_OWNER)
    assert not [(s.name, k) for s in spans for k, v in s.attributes.items() if any(w in str(v) for w in said)]


_DESK = re.compile(r"front desk: webhooks \S+ received on http://127\.0\.0\.1:(\d+) ")


async def test_a_webhook_the_front_desk_stored_is_one_trace_from_the_desk_to_the_model(
        tmp_path: Path, fake_graph: FakeGraphAPI) -> None:
    """The front desk runs on a thread and a loop of its own: its receipt span's context goes into the held row as
    a ``traceparent`` header, and the channel's receipt, when the row is handed over, is its child."""
    async with OtlpReceiver() as receiver:
        config = whatsapp_only_config(tmp_path, fake_graph, [
            "telemetry:", "  enabled: true", f"  endpoint: {receiver.endpoint}/v1/traces"])
        text = config.read_text(encoding="utf-8").replace("  port: 0\n", "  port: 0\n  front_desk_port: 0\n", 1)
        config.write_text(text, encoding="utf-8")
        sabha = SabhaProcess(config, env={"WHATSAPP_ACCESS_TOKEN": fake_graph.token, "WHATSAPP_APP_SECRET": APP_SECRET})
        await sabha.start()
        try:
            [port] = [m.group(1) for line in sabha.lines if (m := _DESK.search(line))]
            async with ClientSession(timeout=ClientTimeout(total=60)) as http:
                status, _ = await post(http, f"http://127.0.0.1:{port}/whatsapp/webhook",
                                       text_notification(WA_OWNER, "What should we price the pilot at?"))
            assert status == 200
            await eventually(lambda: any(s.user == WA_OWNER for s in fake_graph.sent), "the WhatsApp answer", 120)
            assert await sabha.signal(signal.SIGTERM) == 0
        finally:
            await sabha.close()

    [desk] = [n for n in receiver.trees() if n.span.name == "receipt"
              and n.span.attributes.get("sabha.receipt.via") == "front_desk"]
    [handed_over] = desk.named("receipt")
    assert handed_over.span.attributes["sabha.receipt.held"] is True
    assert handed_over.span.attributes["sabha.channel"] == "whatsapp"
    trace = one_trace_from_receipt_to_the_model(handed_over)
    assert {s.trace_id for s in desk.walk()} == {trace}
    with sqlite3.connect(tmp_path / "sessions" / "sabha.db") as db:
        assert {row[0] for row in db.execute("SELECT trace_id FROM llm_calls")} == {trace}
