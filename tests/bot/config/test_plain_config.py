"""``sabha ask`` reads a plain config without the config models, and both readings agree.

:func:`bot.config.plain.read_plain` vouches only for files that set the workspace, the data
dir, the model and the roster; for those the board must get exactly the settings the
validated config gives it, and every default it holds must be the models'. Anything else is
left to the full validation (so errors read as they always did).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from bot.app import provider_settings
from bot.config.layout import BOARD_KEYS, CONFIG_KEYS, LLM_KEYS
from bot.config.load import load_config
from bot.config.plain import PLAIN_KEYS, PlainConfig, read_plain
from bot.config.sections import Config

VOUCHED = {
    "as sabha init writes it": "workspace: ./workspace\ndata_dir: ./sessions\nllm:\n  model: offline\n"
                               "board:\n  roster: board\n",
    "empty": "",
    "elsewhere, a real model": "workspace: ../ws\ndata_dir: data\nllm:\n  model: ' anthropic:claude-sonnet-4-6 '\n",
    "a roster of its own, overrides": (
        "board:\n  roster: mine\n  rosters:\n    mine: [critic, finance]\n  agents:\n"
        "    critic:\n      name: Skeptic\n      emoji: '🦉'\n      model: openai:gpt-4o-mini\n"
        "      tools: [consult]\n      temperature: 0.3\n    finance:\n      soul_file: board/finance.soul.md\n"),
    "a variable": "llm:\n  model: ${SABHA_TEST_MODEL:-offline}\n",
    "single-agent mode": "llm:\n  model: offline\nboard:\n  enabled: false\n  roster: sabha\n",
}

NOT_VOUCHED = {
    "another section": "server:\n  port: 9000\n",
    "another llm key": "llm:\n  max_tokens: 3\n",
    "a typo": "llm:\n  modle: offline\n",
    "an unknown provider": "llm:\n  model: nosuch:thing\n",
    "an unknown roster": "board:\n  roster: nosuch\n",
    "a temperature as text": "board:\n  agents:\n    critic:\n      temperature: '0.5'\n",
    "an unset variable": "llm:\n  model: ${SABHA_TEST_UNSET_VARIABLE}\n",
    "a key naming a secret": "board:\n  rosters:\n    api_key: [critic]\n  roster: api_key\n",
    "workspace not text": "workspace: 3\n",
    "board.enabled not a boolean": "board:\n  enabled: 'no'\n",
    "meetings off (not a plain key)": "board:\n  meetings:\n    enabled: false\n",
}


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sabha.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("text", VOUCHED.values(), ids=VOUCHED.keys())
def test_both_readings_give_the_board_the_same_settings(tmp_path: Path, text: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SABHA_TEST_MODEL", raising=False)
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    path = write(tmp_path, text)
    found = read_plain(path)
    assert found is not None, text
    plain, _ = found
    full = load_config(path, channels=False)
    assert isinstance(plain.config, PlainConfig)
    assert plain.board_settings() == full.board_settings()
    assert plain.models() == full.models()
    assert plain.config.llm.fallbacks == full.config.llm.fallbacks
    for name in ("openai", "anthropic"):
        assert provider_settings(plain, name, {}) == provider_settings(full, name, {})
    for attribute in ("source", "base_dir", "found_by", "warnings", "skipped", "workspace", "data_dir"):
        assert getattr(plain, attribute) == getattr(full, attribute), attribute


@pytest.mark.parametrize("text", NOT_VOUCHED.values(), ids=NOT_VOUCHED.keys())
def test_anything_else_is_left_to_the_full_validation(tmp_path: Path, text: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SABHA_TEST_UNSET_VARIABLE", raising=False)
    assert read_plain(write(tmp_path, text)) is None


def test_no_file_is_left_to_the_full_reading(tmp_path: Path) -> None:
    assert read_plain(None, env={"XDG_DATA_HOME": str(tmp_path / "xdg")}, cwd=tmp_path) is None


def test_the_plain_keys_are_config_keys() -> None:
    assert PLAIN_KEYS[""] <= CONFIG_KEYS and PLAIN_KEYS["llm"] <= LLM_KEYS and PLAIN_KEYS["board"] <= BOARD_KEYS


def _same_defaults(plain: Any, model: Any, where: str) -> None:
    if hasattr(plain, "settings") and not dataclasses.fields(plain):
        assert plain.settings() == model.settings(), where
        return
    if hasattr(plain, "settings"):
        assert plain.settings() == model.settings(), where
    for item in dataclasses.fields(plain):
        mine, theirs = getattr(plain, item.name), getattr(model, item.name)
        if dataclasses.is_dataclass(mine):
            _same_defaults(mine, theirs, f"{where}.{item.name}")
        else:
            assert mine == theirs, f"{where}.{item.name}: {mine!r} here, {theirs!r} in the config models"


def test_every_default_here_is_the_config_models_default() -> None:
    _same_defaults(PlainConfig(), Config.model_validate({}), "config")
