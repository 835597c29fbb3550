"""The terminal chat as a person types at it: a real ``sabha chat`` on a pseudo-terminal (pexpect).

Line editing and history (arrows, a history kept per board across runs), Ctrl-C (clears the
line; on an empty line leaves with exit 0; while an answer is awaited cancels it without a
SIGINT reaching the processes around the chat, so ``make run`` ends cleanly), Ctrl-D, and
log warnings printed as one short line above the prompt with the details in ``chat.log``.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.support.fakes.echo_model import EchoModel

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][0-9A-Za-z]|\r")
PROMPT = "you>"
LEFT, UP = "\x1b[D", "\x1b[A"
CTRL_C, CTRL_D = "\x03", "\x04"


@pytest.fixture
def board_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "board"
    code = pexpect.run(f"{sys.executable} -m bot.cli.main init {folder}", env=chat_env(tmp_path), timeout=60,
                       withexitstatus=True)[1]
    assert code == 0
    return folder


def chat_env(tmp_path: Path) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "xdg"),
            "TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "PYTHONPATH": str(Path(__file__).resolve().parents[3]),
            # pexpect's terminal does not answer "where is the cursor?" (a real one does); without this
            # prompt_toolkit waits for the answer and then prints a warning about it.
            "PROMPT_TOOLKIT_NO_CPR": "1"}


def spawn(command: str, args: list[str], cwd: Path, tmp_path: Path) -> pexpect.spawn:
    child = pexpect.spawn(command, args, cwd=str(cwd), env=chat_env(tmp_path), encoding="utf-8", timeout=30,
                          dimensions=(40, 200))
    child.logfile_read = io.StringIO()  # everything it printed, for screen()
    return child


def spawn_chat(board: Path, tmp_path: Path, *args: str) -> pexpect.spawn:
    return spawn(sys.executable, ["-m", "bot.cli.main", "chat", *args], board, tmp_path)


def screen(child: pexpect.spawn) -> str:
    """Everything the child printed so far, without terminal escapes."""
    return ANSI.sub("", child.logfile_read.getvalue())


def user_lines(board: Path) -> list[str]:
    """Every message the owner sent, from the board's transcripts, in order."""
    texts = []
    for path in sorted((board / "sessions").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if entry.get("type") == "message" and entry.get("role") == "user":
                texts.append(entry["text"])
    return texts


def finish(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus is not None, f"killed by signal {child.signalstatus}"
    return int(child.exitstatus)


def test_arrows_edit_the_line_and_history_is_kept_per_board(board_dir: Path, tmp_path: Path) -> None:
    child = spawn_chat(board_dir, tmp_path)
    child.expect(PROMPT)
    child.send("hel" + LEFT + LEFT + "X\r")  # cursor back two characters, insert X: hXel
    child.expect("General:")
    child.expect(PROMPT)
    child.send(UP + "\r")  # the previous line again
    child.expect("General:")
    child.expect(PROMPT)
    child.send(CTRL_D)
    child.expect("Goodbye.")
    assert finish(child) == 0
    assert user_lines(board_dir) == ["hXel", "hXel"]
    assert "^[[D" not in screen(child) and "[D" not in screen(child)  # arrows move the cursor, not print
    assert "hXel" in (board_dir / "sessions" / "chat-history").read_text(encoding="utf-8")

    again = spawn_chat(board_dir, tmp_path)  # a new chat on the same board remembers the lines
    again.expect(PROMPT)
    again.send(UP + " again\r")
    again.expect("General:")
    again.expect(PROMPT)
    again.send("/quit\r")
    again.expect("Goodbye.")
    assert finish(again) == 0
    assert user_lines(board_dir)[-1] == "hXel again"


def test_ctrl_c_clears_the_line_and_on_an_empty_line_leaves(board_dir: Path, tmp_path: Path) -> None:
    child = spawn_chat(board_dir, tmp_path)
    child.expect(PROMPT)
    child.send("never mind")
    child.send(CTRL_C)  # the line is dropped, a fresh prompt follows
    child.expect(PROMPT)
    child.send("hello board\r")
    child.expect("General:")
    child.expect(PROMPT)
    child.send(CTRL_C)  # on an empty line: leave
    child.expect("Goodbye.")
    assert finish(child) == 0
    assert user_lines(board_dir) == ["hello board"]


def _slow_model_config(board: Path, model: EchoModel) -> None:
    (board / "sabha.yaml").write_text(
        "workspace: ./workspace\ndata_dir: ./sessions\n"
        "llm:\n  model: openai:echo\n  retry: {retries: 0}\n"
        f"  providers:\n    openai:\n      base_url: {model.base_url}\n", encoding="utf-8")


async def _expect(child: pexpect.spawn, pattern: Any, timeout: float = 30) -> int:
    return int(await asyncio.to_thread(child.expect, pattern, timeout=timeout))


async def test_ctrl_c_cancels_an_answer_in_progress_and_make_run_ends_cleanly(board_dir: Path, tmp_path: Path) -> None:
    async with EchoModel(latency=4.0) as model:
        _slow_model_config(board_dir, model)
        makefile = tmp_path / "Makefile"
        makefile.write_text(f"run:\n\t{sys.executable} -m bot.cli.main chat\n", encoding="utf-8")
        child = spawn("make", ["-s", "-f", str(makefile), "run"], board_dir, tmp_path)
        await _expect(child, PROMPT)
        child.send("a slow question\r")
        await _expect(child, "thinking")
        await asyncio.sleep(0.5)
        child.send(CTRL_C)
        await _expect(child, r"\(cancelled")
        await _expect(child, PROMPT)
        model.latency = 0.05
        child.send("a quick one\r")
        await _expect(child, "ECHO a quick one")
        await _expect(child, PROMPT)
        child.send("/quit\r")
        await _expect(child, pexpect.EOF)
        output = screen(child)
        child.close()
        assert child.exitstatus == 0, output
        assert "Interrupt" not in output and "Error" not in output and "Traceback" not in output
        assert "ECHO a slow question" not in output


def test_a_missing_key_is_said_once_when_the_chat_opens(board_dir: Path, tmp_path: Path) -> None:
    """Issue 22 item 19: one warning with the variable to export when the chat opens; the answers
    that follow do not repeat it above the prompt (nor the daemon's "restart" hint); the log has it."""
    config = board_dir / "sabha.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("model: offline ", "model: anthropic:claude-foo"),
                      encoding="utf-8")
    child = spawn_chat(board_dir, tmp_path)
    child.expect(PROMPT)
    for question, who in (("hello board", "General:"), ("@finance what is our runway?", "Finance:"),
                          ("and now?", "General:")):
        child.send(question + "\r")
        child.expect(who)
        child.expect(PROMPT)
    child.send(CTRL_D)
    child.expect("Goodbye.")
    output = screen(child)
    assert finish(child) == 0
    assert output.count("ANTHROPIC_API_KEY") == 1, output
    assert "⚠ anthropic:claude-foo needs an API key: export ANTHROPIC_API_KEY" in output
    assert "✖" not in output and "restart" not in output, output
    log = (board_dir / "sessions" / "chat.log").read_text(encoding="utf-8")
    assert "answering degraded" in log  # the details are still in the log


def test_a_broken_soul_warns_above_the_prompt_in_one_line(board_dir: Path, tmp_path: Path) -> None:
    child = spawn_chat(board_dir, tmp_path)
    child.expect(PROMPT)
    child.send("@critic is this plan sound?\r")
    child.expect("Critic:")
    child.expect(PROMPT)
    child.send("half a li")  # typing when the warning arrives
    (board_dir / "workspace" / "board" / "critic.soul.md").write_text("---\nname: [unclosed\n---\nx\n",
                                                                      encoding="utf-8")
    child.expect("critic.soul.md is broken")
    child.expect(PROMPT)  # the prompt is drawn again under the warning ...
    child.send("ne\r")  # ... with the half-typed line kept
    child.expect("General:")
    child.expect(PROMPT)
    child.send("@critic still there?\r")
    child.expect("Critic:")  # the last good version answers
    child.expect(PROMPT)
    child.send(CTRL_D)
    child.expect("Goodbye.")
    output = screen(child)
    assert finish(child) == 0
    # The prompt line is cleared (escape sequences) before the warning prints at its place: split the
    # raw output there, and the warning is a whole piece of its own.
    pieces = [p for p in ANSI.split(child.logfile_read.getvalue()) if "critic.soul.md is broken" in p]
    assert len(pieces) == 1, pieces
    warning = pieces[0].strip()
    assert warning.startswith("✖ soul[critic]: workspace/board/critic.soul.md is broken (front matter is not "
                              "valid YAML: expected ',' or ']', but got the end of the front matter at line 3")
    assert warning.endswith("keeping the last good version live. Fix the file and save it again.")
    assert "ERROR" not in output and "sabha.files" not in output and "<unicode string>" not in output
    assert not re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}", output)  # no log timestamps on screen
    assert "half a line" in user_lines(board_dir)
    log = (board_dir / "sessions" / "chat.log").read_text(encoding="utf-8")
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ERROR sabha.files: soul\[critic\]", log)
