"""``sabha run``: the daemon in-process and as a real process (SIGTERM / SIGINT), against the
fake Telegram Bot API on 127.0.0.1; plus ``sabha telegram topics``."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest
from aiohttp import ClientSession

from board.workspace.paths import copy_default_workspace
from bot.cli.main import main
from bot.config.load import load_config
from bot.daemon import Daemon, format_uptime
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import FAST, FORUM, OWNER, SPECIALISTS, TOKEN

REPO = Path(__file__).resolve().parents[2]


def write_config(tmp_path: Path, fake: FakeTelegramAPI | None, *, token_env: str = "TELEGRAM_BOT_TOKEN") -> Path:
    copy_default_workspace(tmp_path / "workspace")
    lines = ["workspace: ./workspace", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", "  port: 0"]
    if fake is not None:
        rate = ", ".join(f"{k}: {v}" for k, v in FAST.items())
        lines += [
            "telegram:",
            f"  token: ${{{token_env}}}",
            f"  api_base_url: {fake.base_url}",
            f"  group_id: {FORUM}",
            f"  allowed_user_ids: [{OWNER}]",
            f"  rate_limit: {{{rate}}}",
        ]
    path = tmp_path / "sabha.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_format_uptime() -> None:
    assert format_uptime(5) == "5s"
    assert format_uptime(3725) == "1h 2m 5s"
    assert format_uptime(90061) == "1d 1h 1m 1s"


async def test_daemon_serves_telegram_health_and_status_then_stops(tmp_path: Path, fake: FakeTelegramAPI) -> None:
    loaded = load_config(write_config(tmp_path, fake), env={"TELEGRAM_BOT_TOKEN": TOKEN})
    daemon = Daemon(loaded, install_signals=False)
    task = asyncio.create_task(daemon.run())
    await asyncio.wait_for(daemon.ready.wait(), 300)
    async with ClientSession() as http, http.get(f"http://127.0.0.1:{daemon.port}/healthz") as resp:
        health = await resp.json()
    assert resp.status == 200 and health["status"] == "ok"
    telegram = health["channels"]["telegram"]
    assert telegram["state"] == "running" and set(telegram["topics"]) == set(SPECIALISTS)

    fake.push_text(FORUM, OWNER, "/status")
    [status] = await fake.wait_for_messages(1)
    assert status.message_thread_id is None
    assert "up " in status.text and "telegram: running as @sabha_test_bot (polling)" in status.text
    assert f"finance #{telegram['topics']['finance']}" in status.text

    daemon.request_stop()
    assert await asyncio.wait_for(task, 120) == 0
    polls = len(fake.calls_to("getUpdates"))
    await asyncio.sleep(0.2)
    assert len(fake.calls_to("getUpdates")) == polls  # nothing polls any more


async def test_daemon_without_channels_serves_health(tmp_path: Path) -> None:
    config = write_config(tmp_path, None)
    with config.open("a", encoding="utf-8") as out:
        out.write("web:\n  chat: {enabled: false}\n")  # the web chat is a channel too (on with the web pages)
    daemon = Daemon(load_config(config, env={}), install_signals=False)
    task = asyncio.create_task(daemon.run())
    await asyncio.wait_for(daemon.ready.wait(), 300)
    async with ClientSession() as http, http.get(f"http://127.0.0.1:{daemon.port}/healthz") as resp:
        assert (await resp.json())["channels"] == {}
    assert "channels: none" in daemon.status_text()
    daemon.request_stop()
    assert await asyncio.wait_for(task, 120) == 0


async def _run_sabha(config: Path, env_extra: dict[str, str]) -> asyncio.subprocess.Process:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(env_extra, PYTHONPATH=str(REPO))
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli.main", "run", "--config", str(config),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env, cwd=str(config.parent),
    )


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_sabha_run_exits_cleanly_on_a_signal(tmp_path: Path, fake: FakeTelegramAPI, sig: signal.Signals) -> None:
    proc = await _run_sabha(write_config(tmp_path, fake), {"TELEGRAM_BOT_TOKEN": TOKEN})
    try:
        await fake.wait_for_call("getUpdates", timeout=300)  # running: polling the fake
        fake.push_text(OWNER, OWNER, "hello from a real process")
        [sent] = await fake.wait_for_messages(1, timeout=15)
        assert sent.chat_id == OWNER and sent.text.startswith("🧭 General")
        proc.send_signal(sig)
        _, err = await asyncio.wait_for(proc.communicate(), 120)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    log = err.decode()
    assert proc.returncode == (130 if sig == signal.SIGINT else 0), log  # Ctrl-C ends with 130 (issue 38)
    assert "shutting down" in log and "sabha stopped" in log
    assert "Traceback" not in log
    assert TOKEN not in log


async def test_sabha_run_with_a_rejected_token_says_what_to_do(tmp_path: Path, fake: FakeTelegramAPI) -> None:
    proc = await _run_sabha(write_config(tmp_path, fake), {"TELEGRAM_BOT_TOKEN": "999:wrong"})
    try:
        _, err = await asyncio.wait_for(proc.communicate(), 120)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 2
    assert "Telegram rejected telegram.token" in err.decode() and "@BotFather" in err.decode()
    assert "Traceback" not in err.decode()


async def test_telegram_topics_command_shows_the_map(
    tmp_path: Path, fake: FakeTelegramAPI, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path, fake)
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    daemon = Daemon(load_config(config), install_signals=False)
    task = asyncio.create_task(daemon.run())
    await asyncio.wait_for(daemon.ready.wait(), 300)
    daemon.request_stop()
    await asyncio.wait_for(task, 120)
    created = {t["name"]: t["message_thread_id"] for t in fake.created_topics}

    code = await asyncio.to_thread(main, ["telegram", "topics", "--config", str(config)])
    out = capsys.readouterr().out
    assert code == 0
    assert f"forum {FORUM}" in out
    assert "general" in out and "General" in out
    finance = next(line for line in out.splitlines() if line.startswith("finance"))
    assert str(created["💰 Finance"]) in finance and "db" in finance


def test_telegram_topics_without_a_group_id_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path, None)
    assert main(["telegram", "topics", "--config", str(config)]) == 2
    assert "telegram.group_id is not set" in capsys.readouterr().err


async def test_the_models_in_use_are_prepared_once_ready_and_a_bad_one_is_reported_at_start(
    tmp_path: Path, fake: FakeTelegramAPI, caplog: pytest.LogCaptureFixture
) -> None:
    """Once ready, the daemon builds every model's provider in the background (its SDK imported off
    the event loop: not before the port, ~0.6 s of CPU for the OpenAI SDK, issue 44), so the first
    answer does not stall the event loop for seconds importing it (seen: the first turn imported the
    OpenAI SDK, ~4 s during which no webhook was acknowledged), and a soul naming a provider that is
    not configured is said at start, not at its first question."""
    copy_default_workspace(tmp_path / "workspace")
    critic = tmp_path / "workspace" / "board" / "critic.soul.md"
    critic.write_text(critic.read_text(encoding="utf-8").replace("emoji: 🦉\n", "emoji: 🦉\nmodel: nosuch:oracle\n"),
                      encoding="utf-8")
    config = write_config(tmp_path, fake)
    config.write_text(config.read_text(encoding="utf-8") + "llm:\n  model: openai:gpt-4o-mini\n  providers:\n"
                      "    openai: {api_key: test-key, base_url: 'http://127.0.0.1:9/v1'}\n", encoding="utf-8")
    daemon = Daemon(load_config(config, env={"TELEGRAM_BOT_TOKEN": TOKEN}), install_signals=False)
    task = asyncio.create_task(daemon.run())
    try:
        await asyncio.wait_for(daemon.ready.wait(), 300)
        assert daemon.board is not None
        await asyncio.wait_for(daemon.board.parts.providers.settled(), 300)  # what a first message waits for
        assert "openai" in daemon.board.parts.providers.built()  # built before the first message is answered
        problems = [r.getMessage() for r in caplog.records if "nosuch:oracle" in r.getMessage()]
        assert problems and "not configured" in problems[0] and "answer degraded" in problems[0]
    finally:
        daemon.request_stop()
        await asyncio.wait_for(task, 120)


async def test_sabha_run_answers_a_role_named_in_a_plain_sentence(tmp_path: Path, fake: FakeTelegramAPI) -> None:
    """Issue 25 (seed 003): a real ``sabha run``; a plain question naming the critic is answered by the
    Critic, a sentence where a role's name is only a word by the chair."""
    from tests.support.daemon import SabhaProcess
    from tests.support.daemon import write_config as write_daemon_config

    sabha = SabhaProcess(write_daemon_config(tmp_path, fake, None))
    try:
        await sabha.start()
        fake.push_text(OWNER, OWNER, "What does the critic think about pricing?")
        [critic] = await fake.wait_for_messages(1)
        fake.push_text(OWNER, OWNER, "Our research shows users churn after a week.")
        [_, chair] = await fake.wait_for_messages(2)
    finally:
        await sabha.close()
    assert critic.text.startswith("🦉 Critic"), critic.text
    assert chair.text.startswith("🧭 General"), chair.text
