"""``inbox:``: the shared intake's settings, and the old Telegram key that moved there."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import ConfigError, LoadedConfig
from bot.config.load import parse_config
from bot.daemon import Daemon


def test_inbox_defaults_and_values_reach_the_intake() -> None:
    config = parse_config("inbox:\n  resume_max_age_s: 60\n  max_concurrent_turns: 4\n  shutdown_grace_s: 2\n",
                          source="x.yaml", env={})
    settings = Daemon(LoadedConfig(config=config, source=None, base_dir=Path(".")), install_signals=False).hub.settings
    assert (settings.resume_max_age_s, settings.max_concurrent_turns, settings.shutdown_grace_s) == (60, 4, 2)
    defaults = parse_config("", source="x.yaml", env={}).inbox
    assert (defaults.resume_max_age_s, defaults.max_concurrent_turns, defaults.shutdown_grace_s) == (3600, 32, 20)


def test_the_old_telegram_resume_key_says_where_it_moved() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config("telegram:\n  resume_max_age_s: 600\n", source="sabha.yaml", env={})
    message = str(caught.value)
    assert "sabha.yaml" in message and "telegram.resume_max_age_s" in message
    assert "inbox.resume_max_age_s" in message


def test_a_cap_of_zero_turns_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"inbox\.max_concurrent_turns"):
        parse_config("inbox:\n  max_concurrent_turns: 0\n", source="sabha.yaml", env={})
