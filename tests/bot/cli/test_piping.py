"""Piping ``sabha`` (issue 38): lines piped into ``sabha chat`` after ``/meeting`` wait for that meeting, so a
piped ``/ratify`` rules on the decision it follows, not the one before it; ``sabha meeting "..." > minutes.md``
writes only the minutes to the file (the live statements go to stderr)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.terminal import make_board, terminal_env


def sabha(board: Path, tmp_path: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], cwd=board, env=terminal_env(tmp_path),
                          input=stdin, capture_output=True, text=True, timeout=600)


def test_a_piped_ratify_rules_on_the_meeting_it_follows(tmp_path: Path) -> None:
    board = make_board(tmp_path)
    before = sabha(board, tmp_path, "chat", stdin="/meeting should we hire a designer?\n")
    assert before.returncode == 0, before.stderr
    done = sabha(board, tmp_path, "chat", stdin="/meeting should we open a Pune office?\n/ratify\n")
    assert done.returncode == 0, done.stderr
    [ruling] = [line for line in done.stdout.splitlines() if "✅ Decision" in line]  # the answer to /ratify
    assert "should we open a Pune office?" in ruling, done.stdout
    listed = sabha(board, tmp_path, "decisions", "list")
    assert listed.returncode == 0, listed.stderr
    [designer] = [line for line in listed.stdout.splitlines() if "designer" in line]
    assert "proposed" in designer, listed.stdout  # the earlier decision still waits for its ruling


def test_meeting_into_a_file_writes_only_the_minutes(tmp_path: Path) -> None:
    board = make_board(tmp_path)
    minutes = tmp_path / "minutes.md"
    with open(minutes, "w", encoding="utf-8") as out:
        done = subprocess.run([sys.executable, "-m", "bot.cli", "meeting", "should we open a Pune office?"],
                              cwd=board, env=terminal_env(tmp_path), stdout=out, stderr=subprocess.PIPE, text=True,
                              timeout=600)
    assert done.returncode == 0, done.stderr
    text = minutes.read_text(encoding="utf-8")
    assert text.startswith("# Board meeting: should we open a Pune office?"), text[:400]
    assert "[round 1]" not in text and "== Board meeting" not in text
    assert "[round 1]" in done.stderr  # the live statements, on stderr
