"""SIGHUP re-reads the config: live parts apply, a broken file keeps the running config.

Two tests drive a real ``sabha run`` process (the fake Bot API, the echo model): a
stranger is refused, the config gains their id, SIGHUP, and they are answered; then a
config that does not parse + SIGHUP: the daemon logs why and keeps answering with the
old one. One in-process test covers the other live keys (models, the turn cap, budgets)
and the keys that wait for a restart.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from board.app import Board
from bot.app import all_migrations
from bot.config.load import load_config
from bot.daemon import channel_parts
from bot.intake.config import InboxSection
from bot.intake.intake import IntakeHub
from bot.ops.reload import reload_config
from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import FRIEND, OWNER, STRANGER, eventually


async def _replies(telegram: FakeTelegramAPI, chat: int, count: int) -> list[str]:
    await eventually(lambda: len(telegram.sent_to(chat)) >= count, f"{count} replies in chat {chat}", timeout=20)
    return [m.text for m in telegram.sent_to(chat)]


def _allow(config: Path, ids: list[int]) -> None:
    text = config.read_text(encoding="utf-8")
    old = f"  allowed_user_ids: [{OWNER}, {FRIEND}]"
    assert old in text
    config.write_text(text.replace(old, f"  allowed_user_ids: [{', '.join(map(str, ids))}]"), encoding="utf-8")


async def test_sighup_applies_a_new_allow_list(tmp_path: Path, fake: FakeTelegramAPI, echo_model: EchoModel) -> None:
    config = write_config(tmp_path, fake, echo_model)
    sabha = await SabhaProcess(config).start()
    try:
        fake.push_text(STRANGER, STRANGER, "hello, may I ask something?")
        refused = await _replies(fake, STRANGER, 1)
        assert "only answers its members" in refused[0] and str(STRANGER) in refused[0], refused
        assert echo_model.calls == 0

        _allow(config, [OWNER, FRIEND, STRANGER])
        assert sabha.proc is not None
        sabha.proc.send_signal(signal.SIGHUP)
        line = await sabha.wait_for_log(r"reload: applied telegram\.allowed_user_ids")
        assert f"[{OWNER}, {FRIEND}] -> [{OWNER}, {FRIEND}, {STRANGER}]" in line

        fake.push_text(STRANGER, STRANGER, "Q001 now?")
        answers = await _replies(fake, STRANGER, 2)
        assert "ECHO Q001 now?" in answers[1]
        assert await sabha.signal(signal.SIGTERM) == 0
    finally:
        await sabha.close()


async def test_sighup_with_a_broken_config_keeps_the_old_one(tmp_path: Path, fake: FakeTelegramAPI,
                                                             echo_model: EchoModel) -> None:
    config = write_config(tmp_path, fake, echo_model)
    sabha = await SabhaProcess(config).start()
    try:
        good = config.read_text(encoding="utf-8")
        config.write_text(good.replace("telegram:", "telegram: [oops", 1), encoding="utf-8")
        assert sabha.proc is not None
        sabha.proc.send_signal(signal.SIGHUP)
        await sabha.wait_for_log(r"reload: the new config was refused, the running one stays")
        assert "not valid YAML" in sabha.log

        config.write_text(good.replace("  allowed_user_ids: [", "  allowed_user_idz: [", 1), encoding="utf-8")
        sabha.proc.send_signal(signal.SIGHUP)
        await sabha.wait_for_log(r"telegram\.allowed_user_idz: unknown key")

        fake.push_text(FRIEND, FRIEND, "Q002 still there?")
        answers = await _replies(fake, FRIEND, 1)
        assert "ECHO Q002 still there?" in answers[0]
        assert sabha.proc.returncode is None
        assert await sabha.signal(signal.SIGTERM) == 0
    finally:
        await sabha.close()


async def test_reload_applies_models_turn_cap_and_budgets_and_names_what_needs_a_restart(
        tmp_path: Path, fake: FakeTelegramAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123:abc")
    config = write_config(tmp_path, fake, None)
    loaded = load_config(config)
    board = await Board.open(loaded.board_settings(), migrations=all_migrations())
    hub = IntakeHub(InboxSection(max_concurrent_turns=32))
    try:
        text = config.read_text(encoding="utf-8").replace("server:\n  host: 127.0.0.1\n  port: 0", "server:\n  "
                                                          "host: 127.0.0.1\n  port: 8099")
        text += ("llm:\n  model: offline\n  fallbacks: [offline:second]\ninbox:\n  max_concurrent_turns: 4\n"
                 "budget:\n  daily_usd: 2.5\n  per_sender_daily_usd: 0.25\n")
        config.write_text(text, encoding="utf-8")
        result = reload_config(config, loaded, board=board, runner=board.parts.runner, budget=board.parts.budget,
                               hub=hub, channels=[])
        assert result.error is None
        assert board.parts.runner.settings.fallbacks == ("offline:second",)
        assert hub.scheduler.cap == 4
        assert board.parts.budget.settings.daily_usd == 2.5
        assert board.parts.budget.settings.per_sender_daily_usd == 0.25
        applied = "\n".join(result.applied)
        assert 'llm.fallbacks: [] -> ["offline:second"]' in applied
        assert "inbox.max_concurrent_turns: 32 -> 4" in applied
        assert "budget.daily_usd: null -> 2.5" in applied
        assert result.needs_restart == ["server.port: 0 -> 8099"]
    finally:
        await board.close()


async def test_whatsapp_reconfigure_changes_who_may_talk(board: Board) -> None:
    from bot.channels.whatsapp.channel import WhatsAppChannel
    from bot.channels.whatsapp.config import AccessMode
    from tests.support.fakes.graph_api import FakeGraphAPI
    from tests.support.whatsapp import FRIEND as WA_FRIEND
    from tests.support.whatsapp import STRANGER as WA_STRANGER
    from tests.support.whatsapp import wa_settings

    async with FakeGraphAPI() as graph:
        channel = WhatsAppChannel(channel_parts(board), wa_settings(graph))
        assert not channel.access.admit(WA_STRANGER).allowed
        channel.reconfigure(wa_settings(graph, allowed_numbers=[WA_FRIEND, WA_STRANGER]))
        assert channel.access.admit(WA_STRANGER).allowed
        assert channel.access.is_owner(WA_FRIEND), "the first listed number is the owner"
        channel.reconfigure(wa_settings(graph, allowed_numbers=[WA_FRIEND], access="public",
                                        public_rate_per_minute=1))
        assert channel.settings.access is AccessMode.PUBLIC
        assert channel.access.admit("15550007777").allowed
        refused = channel.access.admit("15550007777")
        assert not refused.allowed and refused.notice is not None, "the new public rate applies"
        group = "Y2FwaV9ncm91cDoxNzA1NTU1MDEzOToxMjAzNjM0MDQ2OTQyMzM4MjAZD"
        channel.reconfigure(wa_settings(graph, allowed_numbers=[WA_FRIEND], allowed_groups=[group]))
        assert channel.groups.admits(group, "wamid.G1"), "a newly allowed group is answered"
    from bot.ops.reload import LIVE

    # ... and a reload says so: the allow-list of groups is applied live, not logged as needing a restart
    assert any(k == "whatsapp.allowed_groups" or "whatsapp.allowed_groups".startswith(k + ".") for k in LIVE)


async def test_sighup_to_a_model_without_its_key_is_refused_whole(
        tmp_path: Path, fake: FakeTelegramAPI, echo_model: EchoModel, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 22 item 17: a reload naming a model the daemon cannot use (no key) changes nothing,
    not even the keys of the same file that would have been fine; the reason is logged and the
    old model keeps answering."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # the daemon inherits this environment
    config = write_config(tmp_path, fake, echo_model)
    sabha = await SabhaProcess(config).start()
    try:
        _allow(config, [OWNER, FRIEND, STRANGER])
        text = config.read_text(encoding="utf-8")
        config.write_text(text.replace("  model: openai:echo", "  model: anthropic:claude-sonnet-4-6", 1),
                          encoding="utf-8")
        assert sabha.proc is not None
        sabha.proc.send_signal(signal.SIGHUP)
        line = await sabha.wait_for_log(r"reload: the new config was refused, the running one stays")
        assert "anthropic:claude-sonnet-4-6" in line and "ANTHROPIC_API_KEY" in line, line
        assert "reload: applied" not in sabha.log

        fake.push_text(STRANGER, STRANGER, "Q003 may I ask now?")  # the allow-list of the same file: not applied
        refused = await _replies(fake, STRANGER, 1)
        assert "only answers its members" in refused[0], refused
        fake.push_text(FRIEND, FRIEND, "Q004 who answers?")
        answers = await _replies(fake, FRIEND, 1)
        assert "ECHO Q004 who answers?" in answers[0], answers  # the old model, not a degraded turn
        assert "degraded" not in sabha.log
        assert await sabha.signal(signal.SIGTERM) == 0
    finally:
        await sabha.close()
