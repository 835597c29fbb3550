"""A real ``sabha run`` process in production conditions: systemd's notify socket and
watchdog, JSON logs under systemd with no secret in them (a provider 401 echoing the key,
a token Telegram rejects, /status, ``sabha config check``), and a second SIGTERM / SIGINT
that exits at once without losing the message being answered."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from bot.ops.runtime import RUNTIME_FILE
from tests.support.daemon import DAEMON_REPO, SabhaProcess, tally, wait_answered, write_config
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.ops import NotifyListener
from tests.support.telegram import OWNER, TOKEN, eventually

SECRETS = {
    "TELEGRAM_BOT_TOKEN": TOKEN,
    "OPENAI_API_KEY": "sk-test-SECRET-openai-0123456789",
    "ANTHROPIC_API_KEY": "sk-ant-SECRET-anthropic-0123456789",
    "WHATSAPP_ACCESS_TOKEN": "EAAG-SECRET-whatsapp-access-0123",
    "WHATSAPP_APP_SECRET": "whatsapp-app-SECRET-0123456789",
}
CONFIG_ONLY_SECRET = "sk-ant-config-literal-SECRET-42"  # written in the config file, in no env var


def dm(fake: FakeTelegramAPI, text: str) -> dict[str, Any]:
    return fake.push_text(OWNER, OWNER, text, is_forum=False, chat_type="private")


@pytest.fixture
async def rejecting_provider() -> AsyncIterator[str]:
    """An OpenAI-compatible server answering 401 and quoting the key it was given, as
    careless servers do; yields its base URL."""

    async def chat(request: web.Request) -> web.Response:
        key = request.headers.get("Authorization", "").removeprefix("Bearer ")
        return web.json_response({"error": {"message": f"Incorrect API key provided: {key}.",
                                            "type": "invalid_request_error", "code": "invalid_api_key"}},
                                 status=401)

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"http://127.0.0.1:{port}/v1"
    await runner.cleanup()


async def test_sabha_run_notifies_systemd_and_writes_daemon_json(tmp_path: Path, fake: FakeTelegramAPI) -> None:
    config = write_config(tmp_path, fake, None)
    async with NotifyListener(abstract=True) as systemd:
        proc = SabhaProcess(config, env={"TELEGRAM_BOT_TOKEN": TOKEN, **systemd.env, "WATCHDOG_USEC": "400000"})
        try:
            await proc.start()
            await systemd.wait_for("READY=1")
            status = await systemd.wait_for("STATUS=")
            assert "telegram running" in status and "pending inbox 0" in status, status
            await eventually(lambda: systemd.lines.count("WATCHDOG=1") >= 3, "watchdog pings", timeout=15)
            runtime = json.loads((tmp_path / "sessions" / RUNTIME_FILE).read_text(encoding="utf-8"))
            assert proc.proc is not None and runtime["pid"] == proc.proc.pid and runtime["port"] == proc.port
            assert await proc.signal(signal.SIGTERM) == 0
            await systemd.wait_for("STOPPING=1")
            assert not (tmp_path / "sessions" / RUNTIME_FILE).exists()  # removed at a clean exit
        finally:
            await proc.close()


async def test_no_secret_in_logs_errors_status_or_config_check(
    tmp_path: Path, fake: FakeTelegramAPI, rejecting_provider: str
) -> None:
    config = write_config(tmp_path, fake, None, extra=[
        "llm:", "  model: openai:gpt-4o-mini", "  retry: {retries: 0}", "  providers:",
        "    openai: {api_key: '${OPENAI_API_KEY}', base_url: '" + rejecting_provider + "'}",
        f"    anthropic: {{api_key: '{CONFIG_ONLY_SECRET}'}}",
        "logging: {level: DEBUG, format: auto}",
    ])
    env = {**SECRETS, "INVOCATION_ID": "0123456789abcdef"}  # as under systemd: JSON lines
    proc = SabhaProcess(config, env=env)
    try:
        await proc.start()
        dm(fake, "Q001 what do you think?")  # the provider rejects the key (401 quoting it)
        dm(fake, "/status")
        await fake.wait_for_messages(2, timeout=20)
        await proc.wait_for_log("invalid_api_key|401", timeout=20)
        fake.token = "999:another-token"  # Telegram now rejects the token
        dm(fake, "Q002 after the token was revoked")
        await proc.wait_for_log("token was rejected|rejected the token", timeout=20)
        await proc.signal(signal.SIGTERM)
    finally:
        await proc.close()
    check = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "bot.cli", "config", "check", "--config", str(config)],
        capture_output=True, text=True, timeout=60, cwd=str(tmp_path),
        env={**{k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}, **SECRETS,
             "PYTHONPATH": str(DAEMON_REPO)},
    )
    assert check.returncode == 0, check.stderr
    replies = "\n".join(m.text for m in fake.sent_messages)
    assert "up " in replies  # the /status answer is among them
    for name, secret in [*SECRETS.items(), ("config", CONFIG_ONLY_SECRET)]:
        assert secret not in proc.log, f"{name} leaked into the daemon's log"
        assert secret not in check.stdout + check.stderr, f"{name} leaked into `sabha config check`"
        assert secret not in replies, f"{name} leaked into a Telegram reply"
    records = [json.loads(line) for line in proc.lines if line.startswith("{")]
    assert records and len(records) == len([line for line in proc.lines if line.strip()]), "not all lines are JSON"
    turns = [r for r in records if r.get("event") == "turn"]
    assert turns, "no turn line"
    fields = {"channel", "session_key", "role", "latency_ms", "input_tokens", "output_tokens", "cost_usd"}
    assert fields <= set(turns[0]), turns[0]
    assert turns[0]["channel"] == "telegram" and turns[0]["degraded"] is True


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
async def test_a_second_signal_exits_at_once_and_the_message_is_answered_at_the_next_start(
    tmp_path: Path, fake: FakeTelegramAPI, sig: signal.Signals, code: int
) -> None:
    async with EchoModel(latency=120) as model:  # the turn outlasts any test: only a second signal ends it
        config = write_config(tmp_path, fake, model, inbox={"shutdown_grace_s": 600})
        proc = SabhaProcess(config)
        try:
            await proc.start()
            dm(fake, "Q001 a question the slow model is thinking about")
            await eventually(lambda: model.in_flight == 1, "the model call to start", timeout=20)
            assert proc.proc is not None
            proc.proc.send_signal(sig)
            await proc.wait_for_log("shutting down", timeout=20)
            assert proc.proc.returncode is None  # waiting for the running answer
            assert await proc.signal(sig, timeout=20) == code
            assert "exiting now" in proc.log
            assert not (tmp_path / "sessions" / RUNTIME_FILE).exists()
        finally:
            await proc.close()
        model.latency = 0.0
        again = SabhaProcess(config)
        try:
            await again.start()
            await wait_answered(fake, 1, first=1, timeout=30)
            await asyncio.sleep(0.2)
            assert tally(fake, 1, first=1) == ([], [])  # answered once: not lost, not twice
            assert await again.signal(signal.SIGTERM) == 0
        finally:
            await again.close()
