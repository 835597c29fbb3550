"""``sabha souls`` reads the board's layout without validating the whole config (bot.config.layout).

What it reads (workspace, data dir, roster, agents' overrides, the default model) must agree
with the full validation, and anything it cannot vouch for must fall back to it (so the
error is the usual one). It must never accept a file the full validation refuses in the
parts souls depends on.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import ConfigError
from bot.config.layout import AGENT_KEYS, BOARD_KEYS, CONFIG_KEYS, LLM_KEYS, layout_of, read_layout
from bot.config.load import load_config
from bot.config.sections import AgentOverrideConfig, BoardSection, Config, LLMSection

REPO = Path(__file__).resolve().parents[3]


def test_the_key_lists_are_the_models_fields() -> None:
    assert set(Config.model_fields) == CONFIG_KEYS
    assert set(LLMSection.model_fields) == LLM_KEYS
    assert set(BoardSection.model_fields) == BOARD_KEYS
    assert set(AgentOverrideConfig.model_fields) == AGENT_KEYS


VALID = [
    "",
    "workspace: ./ws\ndata_dir: ./data\nllm:\n  model: offline\nboard:\n  roster: sabha\n",
    "llm:\n  model: ' anthropic:claude-x '\n  prices: {'openai:x': {input: 1, output: 2}}\n",
    "board:\n  roster: mine\n  rosters:\n    mine: [finance, general, critic]\n",
    "board:\n  agents:\n    critic: {name: Grumpy, emoji: '😾', model: 'openai:gpt-x', tools: [recall],"
    " temperature: 1}\n",
    "board:\n  agents:\n    finance: {soul_file: x.md, temperature: 0.25}\n",
    "server:\n  port: 8081\n",
]
#: Wrong only where souls does not read: the light reading takes them, the full validation refuses them.
ELSEWHERE = ["server:\n  port: 99999\n", "llm:\n  prices: {whatever: 1}\n", "budget:\n  daily_usd: -1\n"]
DOUBTFUL = [
    "llm:\n  modle: offline\n",
    "lm:\n  model: offline\n",
    "llm:\n  model: wizard:x\n",
    "llm:\n  model: 3\n",
    "llm: [1]\n",
    "board:\n  roster: nope\n",
    "board:\n  rosters:\n    Mine: [finance]\n",
    "board:\n  agents:\n    critic: {name: ''}\n",
    "board:\n  agents:\n    critic: {emoji: '12345678901234567'}\n",
    "board:\n  agents:\n    critic: {temperature: 3}\n",
    "board:\n  agents:\n    critic: {temperature: '0.5'}\n",
    "board:\n  agents:\n    critic: {temperature: true}\n",
    "board:\n  agents:\n    critic: {tools: recall}\n",
    "board:\n  agents:\n    critic:\n",
    "board:\n  agents:\n    Critic: {}\n",
    "board:\n  agents:\n    critic: {colour: red}\n",
    "workspace: 3\n",
    "llm:\n  model: ${NOT_SET_ANYWHERE_X}\n",
    "telegram:\n  token: ${NOT_SET_ANYWHERE_X}\n",  # any unset variable: as the full reading skips or refuses it
]


@pytest.mark.parametrize("text", VALID)
def test_what_it_reads_is_what_the_full_validation_says(text: str, tmp_path: Path) -> None:
    path = tmp_path / "sabha.yaml"
    path.write_text(text, encoding="utf-8")
    layout = read_layout(path, env={})
    assert layout is not None
    full = layout_of(load_config(path, env={}, channels=False))
    assert layout == full  # workspace, data dir, roster with overrides, model, source


@pytest.mark.parametrize("text", ELSEWHERE)
def test_sections_souls_does_not_read_are_left_to_the_full_validation(text: str, tmp_path: Path) -> None:
    path = tmp_path / "sabha.yaml"
    path.write_text(text, encoding="utf-8")
    assert read_layout(path, env={}) is not None
    with pytest.raises(ConfigError):
        load_config(path, env={})


@pytest.mark.parametrize("text", DOUBTFUL)
def test_what_it_cannot_vouch_for_goes_to_the_full_validation(text: str, tmp_path: Path) -> None:
    path = tmp_path / "sabha.yaml"
    path.write_text(text, encoding="utf-8")
    assert read_layout(path, env={}) is None
    with contextlib.suppress(ConfigError):  # the full validation says what is wrong (most of these)
        load_config(path, env={}, channels=False)


def test_a_broken_file_is_the_same_error(tmp_path: Path) -> None:
    path = tmp_path / "sabha.yaml"
    path.write_text("llm:\n  model: [offline\n", encoding="utf-8")
    with pytest.raises(ConfigError) as light:
        read_layout(path, env={})
    with pytest.raises(ConfigError) as full:
        load_config(path, env={})
    assert str(light.value) == str(full.value)


def test_a_yaml_error_is_worded_as_before_and_names_the_character(tmp_path: Path) -> None:
    """libyaml parses the file; the pure-Python parser words a file it refuses (as before it was used)."""
    path = tmp_path / "sabha.yaml"
    path.write_text("llm:\n\t- model: offline\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(path, env={})
    assert str(err.value) == (f"config {path}: not valid YAML at line 2, column 1: "
                              "found character '\\t' that cannot start any token")


def test_souls_validates_no_whole_config_and_still_refuses_a_typo_it_depends_on(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg"), "PYTHONPATH": str(REPO)}
    env.pop("SABHA_CONFIG", None)
    board = tmp_path / "b"
    subprocess.run([sys.executable, "-m", "bot.cli", "init", str(board)], env=env, check=True, capture_output=True,
                   timeout=120)
    config = board / "sabha.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "server:\n  port: 99999\n", encoding="utf-8")
    souls = subprocess.run([sys.executable, "-m", "bot.cli", "souls"], cwd=board, env=env, capture_output=True,
                           text=True, timeout=120)
    assert souls.returncode == 0 and "🦉 Critic" in souls.stdout, souls.stderr  # the server is not souls' business
    check = subprocess.run([sys.executable, "-m", "bot.cli", "config", "check"], cwd=board, env=env,
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == 2 and "server.port" in check.stdout + check.stderr
    config.write_text(config.read_text(encoding="utf-8").replace("roster: board", "roster: bored"), encoding="utf-8")
    wrong = subprocess.run([sys.executable, "-m", "bot.cli", "souls"], cwd=board, env=env, capture_output=True,
                           text=True, timeout=120)
    assert wrong.returncode == 2 and "roster 'bored' is unknown" in wrong.stderr, wrong.stderr
