"""Consent in the terminal chat: a real ``sabha chat`` on a pseudo-terminal, the scripted model (the fake OpenAI
API) and the npm filesystem server given to the chair. While the board answers, the chair asks to run
``write_file``: the question prints with its buttons as the commands they send, and ``/allow 1`` typed while the
turn waits (the prompt is not reading lines then) is taken at once; the write runs, then the answer prints.
Other text typed while the board answers is still not sent (another command is said not to be sent)."""

from __future__ import annotations

import sys
from pathlib import Path

import pexpect

from board.workspace.paths import copy_default_workspace
from tests.bot.cli.test_chat_tty import PROMPT, _expect, screen, spawn
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.mcp import npm_server


def chat_config(root: Path, model: FakeOpenAI, files: Path) -> Path:
    copy_default_workspace(root / "workspace")
    files.mkdir(parents=True, exist_ok=True)
    path = root / "sabha.yaml"
    path.write_text("\n".join([
        "workspace: ./workspace", "data_dir: ./sessions", "llm:", "  model: openai:gpt-test",
        "  retry: {retries: 0}", "  providers:", "    openai:", "      api_key: test-key",
        f"      base_url: {model.base_url}", "      stream: false", "board:", "  slow_notice_s: 0",
        "  agents:", "    general:", '      tools: ["mcp:fs"]', "mcp:", "  servers:", "    fs:",
        f"      command: {npm_server('mcp-server-filesystem')}", f"      args: [{files}]",
        "tools:", "  consent_timeout_s: 120", "",
    ]), encoding="utf-8")
    return path


async def test_allow_typed_while_the_board_answers_runs_the_write(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    files = tmp_path / "files"
    config = chat_config(tmp_path / "board", fake_openai, files)
    fake_openai.script_tool_call("fs__write_file", {"path": str(files / "t.txt"), "content": "from the terminal"})
    fake_openai.script_text("Done: the file is written [fs.write_file].")
    child = spawn(sys.executable, ["-m", "bot.cli.main", "chat", "--config", str(config)], config.parent, tmp_path)
    try:
        await _expect(child, PROMPT, timeout=120)
        child.send("please write the file\r")
        await _expect(child, r"\[Deny: /deny 1\]", timeout=120)  # the question, its buttons as commands
        assert "wants to run fs.write_file" in screen(child)
        child.send("hello\r")  # type-ahead: dropped as ever
        child.send("/meeting now\r")  # a command that is not a consent answer: not sent, and said so
        await _expect(child, "only /allow or /deny is taken; /meeting was not sent")
        assert not (files / "t.txt").exists()
        child.send("/allow 1\r")
        await _expect(child, r"Allowed once: fs.write_file \(#1\)", timeout=60)
        await _expect(child, "the file is written", timeout=60)
        await _expect(child, PROMPT)
        child.send("/quit\r")
        await _expect(child, pexpect.EOF)
    finally:
        child.close(force=True)
    assert (files / "t.txt").read_text() == "from the terminal"
    output = screen(child)
    assert "Traceback" not in output
    assert len(fake_openai.requests) == 2  # neither "hello" nor /meeting reached a model
