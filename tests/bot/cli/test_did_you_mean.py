"""Misspellings get a "did you mean" (issue 38): ``sabha chta`` (and ``sabha sessions shwo``) name the command
meant, and a config key such as ``llm.modle`` names the key meant at that path, in the one line each error
already is; with nothing close, no guess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.terminal import make_board, terminal_env


def sabha(board: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], cwd=board, env=terminal_env(tmp_path),
                          capture_output=True, text=True, timeout=300)


def error_lines(done: subprocess.CompletedProcess[str], word: str) -> list[str]:
    return [line for line in done.stderr.splitlines() if word in line]


def test_a_misspelt_command_gets_a_did_you_mean(tmp_path: Path) -> None:
    board = make_board(tmp_path)
    wrong = sabha(board, tmp_path, "chta")
    assert wrong.returncode == 2
    [line] = error_lines(wrong, "invalid choice")
    assert "invalid choice: 'chta': did you mean 'chat'?" in line, wrong.stderr
    wrong = sabha(board, tmp_path, "sessions", "shwo")
    assert wrong.returncode == 2
    [line] = error_lines(wrong, "invalid choice")
    assert "did you mean 'show'?" in line, wrong.stderr
    assert "did you mean" not in sabha(board, tmp_path, "xyzzy").stderr  # nothing close: no guess


def test_a_misspelt_config_key_gets_a_did_you_mean(tmp_path: Path) -> None:
    board = make_board(tmp_path)
    config = board / "sabha.yaml"
    text = config.read_text(encoding="utf-8").replace("  model: offline", "  modle: offline")
    text = text.replace("board:\n", "board:\n  agents:\n    finance:\n      emojii: '$'\n  zzzz: 1\n")
    config.write_text(text + "telegram:\n  tokn: x\nweb:\n  enabeld: true\n", encoding="utf-8")
    done = sabha(board, tmp_path, "config", "check")
    assert done.returncode == 2, done.stderr
    for key, meant in (("llm.modle", "model"), ("telegram.tokn", "token"), ("web.enabeld", "enabled"),
                       ("board.agents.finance.emojii", "emoji")):
        [line] = error_lines(done, f"{key}:")
        assert f"{key}: unknown key: did you mean '{meant}'?" in line, done.stderr
    [line] = error_lines(done, "board.zzzz:")
    assert "did you mean" not in line and "check the spelling" in line, done.stderr
    assert "Traceback" not in done.stderr
