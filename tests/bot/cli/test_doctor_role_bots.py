"""``board.agents.<role>.telegram_token``: ``sabha doctor`` asks each role bot's ``getMe`` (a refused token is a
failed check that says what to do), and neither doctor nor ``sabha config check --verbose`` ever shows a token."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bot.cli.test_ops_cli import arun, plain_config
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import OWNER, TOKEN

FINANCE_TOKEN = "700001:finance-bot_token"
REVOKED_TOKEN = "700003:strategy-revoked"


def config_with_role_bots(root: Path, fake: FakeTelegramAPI) -> Path:
    return plain_config(root, "telegram:", "  token: ${TELEGRAM_BOT_TOKEN}", f"  api_base_url: {fake.base_url}",
                        f"  allowed_user_ids: [{OWNER}]", "board:", "  agents:",
                        "    finance:", "      telegram_token: ${FINANCE_BOT_TOKEN}",
                        "    strategy:", "      telegram_token: ${STRATEGY_BOT_TOKEN}")


async def test_doctor_checks_each_role_bot_and_never_shows_a_token(
    tmp_path: Path, fake: FakeTelegramAPI, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.add_bot(FINANCE_TOKEN, bot_id=7000000011, username="sabha_finance_bot", first_name="Finance")
    for name, value in (("TELEGRAM_BOT_TOKEN", TOKEN), ("FINANCE_BOT_TOKEN", FINANCE_TOKEN),
                        ("STRATEGY_BOT_TOKEN", REVOKED_TOKEN)):
        monkeypatch.setenv(name, value)
    config = config_with_role_bots(tmp_path, fake)
    capsys.readouterr()
    code, out, _ = await arun(capsys, "doctor", "--config", str(config))
    assert code == 1
    assert "OK    channel telegram:" in out
    assert "OK    telegram bot of finance:" in out and "@sabha_finance_bot" in out
    assert "FAIL  telegram bot of strategy: reachable, but the bot token was refused (HTTP 401)" in out
    assert "fix: copy that bot's token from @BotFather into board.agents.strategy.telegram_token" in out
    assert FINANCE_TOKEN not in out and REVOKED_TOKEN not in out

    code, out, err = await arun(capsys, "config", "check", "--verbose", "--config", str(config))
    assert "telegram_token" in out
    assert FINANCE_TOKEN not in out + err and REVOKED_TOKEN not in out + err
