"""What ``sabha run`` imports before it is ready (issue 44, "Start-up"): a real daemon with ``-X importtime``.

The interpreter writes one ``import time:`` line to stderr as each module finishes importing, on the same
stream as the daemon's log, so the lines before "sabha ... running" (logged as the daemon becomes ready) are
exactly what the start imported. Before it: no model SDK (each is imported once the daemon is ready, off the
event loop: ``openai`` alone was a third of the start's imports), no library of a channel that is not
enabled, no PostgreSQL driver on SQLite, no image library. Counted, never timed
(``benchmarks/run_start.py`` has the CPU figures).
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import OWNER, TOKEN

_IMPORTED = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$")
_RUNNING = re.compile(r"sabha \S+ running")

#: Never imported before the daemon is ready, whatever is configured.
NEVER_BEFORE_READY = {"openai", "anthropic", "google.genai", "PIL", "pypdf", "jsonschema", "prompt_toolkit"}
#: Libraries of channels and backends that are not configured in these tests: never imported at all.
NOT_CONFIGURED = {"slack_sdk", "discord", "asyncpg", "bot.channels.whatsapp.channel", "bot.channels.slack.channel",
                  "bot.channels.discord.channel"}


def imported_before_ready(lines: list[str]) -> set[str]:
    """The modules imported before the "running" line (every package of a dotted name counted)."""
    names: set[str] = set()
    for line in lines:
        if _RUNNING.search(line):
            return names
        found = _IMPORTED.match(line)
        if found:
            parts = found.group(1).split(".")
            names.update(".".join(parts[:n]) for n in range(1, len(parts) + 1))
    raise AssertionError("no 'running' line: " + "\n".join(lines[-20:]))


def imported_after(lines: list[str]) -> set[str]:
    found = [m.group(1) for line in lines if (m := _IMPORTED.match(line))]
    return {name.split(".")[0] for name in found}


async def test_a_daemon_with_a_model_sdk_and_telegram_imports_neither_sdk_nor_other_channels_before_ready(
        tmp_path: Path, fake: FakeTelegramAPI, echo_model: EchoModel) -> None:
    """OpenAI (the echo model) and Telegram configured: the SDK is imported once ready, the first answer
    comes through it; nothing of Slack, Discord, WhatsApp or PostgreSQL is imported."""
    config = write_config(tmp_path, fake, echo_model)
    sabha = SabhaProcess(config, env={"TELEGRAM_BOT_TOKEN": TOKEN, "PYTHONPROFILEIMPORTTIME": "1"})
    try:
        await sabha.start()
        before = imported_before_ready(sabha.lines)
        assert {"telegram", "bot.channels.telegram.outbound"} <= before  # the enabled channel
        assert not before & NEVER_BEFORE_READY, sorted(before & NEVER_BEFORE_READY)
        assert not before & NOT_CONFIGURED, sorted(before & NOT_CONFIGURED)
        await sabha.wait_for_log(r"\|\s*openai$")  # imported after the start, in the background
        fake.push_text(OWNER, OWNER, "hello there")
        [reply] = await fake.wait_for_messages(1)
        assert "hello there" in reply.text  # answered by the echo model, through the SDK
        assert not imported_after(sabha.lines) & {"slack_sdk", "discord", "asyncpg", "anthropic"}
    finally:
        await sabha.close()


async def test_the_embedded_defaults_import_no_sdk_and_no_channel_library(tmp_path: Path) -> None:
    """A board as ``sabha init`` makes it (the offline model, SQLite, the web page only): no model SDK, no
    Telegram, Slack or Discord library, no PostgreSQL driver, before ready or after."""
    from tests.support.cli import init_board

    folder, env = await init_board(tmp_path)
    config = folder / "sabha.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "server:\n  host: 127.0.0.1\n  port: 0\n",
                      encoding="utf-8")
    sabha = SabhaProcess(config, env={**env, "PYTHONPROFILEIMPORTTIME": "1"})
    try:
        await sabha.start()
        before = imported_before_ready(sabha.lines)
        assert "bot.channels.web" in before
        assert not before & NEVER_BEFORE_READY, sorted(before & NEVER_BEFORE_READY)
        assert not before & {*NOT_CONFIGURED, "telegram", "telegramify_markdown"}, before & {"telegram"}
        await sabha.wait_for_log(r"sabha \S+ running")
        assert not imported_after(sabha.lines) & {"openai", "anthropic", "google", "telegram", "slack_sdk", "discord"}
    finally:
        await sabha.close()
