"""Traces from a real ``sabha run`` (issue 44, "Traces"): the offline model, WhatsApp on the fake Graph API,
``PYTHONPROFILEIMPORTTIME`` set so the process itself lists every module it imports on its stderr.

With ``telemetry`` off (the default) answering a message imports no module of OpenTelemetry at all; with it on,
the message's trace reaches the local OTLP/HTTP receiver when Sabha stops (its receipt -> the message -> answer ->
admission, the turn and its model call -> the send, one trace id), and the import list shows the SDK (so the first
check can fail)."""

from __future__ import annotations

import re
import signal
from pathlib import Path

from aiohttp import ClientSession, ClientTimeout

from board.workspace.paths import copy_default_workspace
from tests.support.daemon import SabhaProcess
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.otlp_receiver import OtlpReceiver, render
from tests.support.telegram import eventually
from tests.support.whatsapp import APP_SECRET, NUMBER_ID, OWNER, VERIFY_TOKEN, post, text_notification

_IMPORTED = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)")


def write_config(root: Path, graph: FakeGraphAPI, telemetry: list[str]) -> Path:
    copy_default_workspace(root / "workspace")
    config = root / "sabha.yaml"
    config.write_text("\n".join([
        "workspace: ./workspace", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", "  port: 0",
        "llm:", "  model: offline",
        "whatsapp:", f'  phone_number_id: "{NUMBER_ID}"', "  access_token: ${WHATSAPP_ACCESS_TOKEN}",
        "  app_secret: ${WHATSAPP_APP_SECRET}", f"  verify_token: {VERIFY_TOKEN}",
        f"  graph_base_url: {graph.base_url}", f"  api_version: {graph.version}",
        f'  allowed_numbers: ["{OWNER}"]', *telemetry]) + "\n", encoding="utf-8")
    return config


async def answered_once(root: Path, graph: FakeGraphAPI, telemetry: list[str]) -> set[str]:
    """Start ``sabha run``, have the owner ask one thing, wait for the answer, stop it (SIGTERM); every module it
    imported."""
    sabha = SabhaProcess(write_config(root, graph, telemetry),
                         env={"WHATSAPP_ACCESS_TOKEN": graph.token, "WHATSAPP_APP_SECRET": APP_SECRET,
                              "PYTHONPROFILEIMPORTTIME": "1"})
    await sabha.start()
    try:
        async with ClientSession(timeout=ClientTimeout(total=60)) as http:
            status, _ = await post(http, f"http://127.0.0.1:{sabha.port}/whatsapp/webhook",
                                   text_notification(OWNER, "What should we price the pilot at?"))
        assert status == 200
        await eventually(lambda: any(s.user == OWNER for s in graph.sent), "the answer", 120)
        assert await sabha.signal(signal.SIGTERM) == 0
    finally:
        await sabha.close()
    return {m.group(1) for line in sabha.lines if (m := _IMPORTED.match(line))}


async def test_tracing_off_imports_no_opentelemetry_module(tmp_path: Path, fake_graph: FakeGraphAPI) -> None:
    imported = await answered_once(tmp_path, fake_graph, [])
    assert "board.telemetry.spans" in imported and "aiohttp" in imported  # the list is the process's own
    assert not {m for m in imported if m.split(".")[0] == "opentelemetry"}


async def test_a_messages_trace_reaches_the_receiver_from_sabha_run(tmp_path: Path,
                                                                    fake_graph: FakeGraphAPI) -> None:
    async with OtlpReceiver() as receiver:
        imported = await answered_once(tmp_path, fake_graph, [
            "telemetry:", "  enabled: true", f"  endpoint: {receiver.endpoint}/v1/traces"])
    assert "opentelemetry.sdk.trace" in imported
    [message] = [n for root in receiver.trees() if root.span.name == "receipt" for n in root.named("message")]
    print("\n".join(render(message)))
    assert {s.trace_id for s in message.walk()} == {message.span.trace_id}
    [answer] = message.named("answer")
    assert [c.span.name for c in answer.children][:2] == ["admission", "turn"]
    [turn] = answer.named("turn")
    [chat] = turn.named("chat ")
    assert chat.span.attributes["gen_ai.provider.name"] == "offline" and chat.span.attributes["sabha.role"]
    assert "gen_ai.usage.output_tokens" in chat.span.attributes
    assert message.named("send"), "the delivery is in the message's trace"
