"""A CLI that starts at once: each command imports only what it uses (issue 14, "Fast start").

Checked in fresh subprocesses from ``sys.modules`` at exit, never by timing (timings are in
``benchmarks/cli_start.py``). The model SDKs, python-telegram-bot, aiohttp's server, jsonschema
and Jinja2 load only for the commands and turns that need them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

PROBE = """
import json, sys
from bot.cli.main import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
sys.stdout.flush()
sys.stderr.write("\\nMODULES=" + json.dumps(sorted(m.split(".")[0] for m in sys.modules)) + "\\n")
sys.stderr.write("FULL=" + json.dumps(sorted(sys.modules)) + "\\n")
"""


def imported(args: list[str], cwd: Path, tmp_path: Path) -> tuple[set[str], set[str]]:
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg"), "PYTHONPATH": str(REPO)}
    env.pop("SABHA_CONFIG", None)
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)
    lines = dict(line.split("=", 1) for line in done.stderr.splitlines() if line.startswith(("MODULES=", "FULL=")))
    assert "MODULES" in lines, done.stderr
    return set(json.loads(lines["MODULES"])), set(json.loads(lines["FULL"]))


@pytest.fixture
def board(tmp_path: Path) -> Path:
    folder = tmp_path / "board"
    subprocess.run([sys.executable, "-m", "bot.cli.main", "init", str(folder)], check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    return folder


NEVER_FOR_HELP = {"telegram", "anthropic", "openai", "aiohttp", "jinja2", "jsonschema", "pydantic", "prompt_toolkit",
                  "watchfiles", "prometheus_client", "telegramify_markdown", "httpx", "yaml", "aiosqlite"}


def test_help_imports_no_sdk_no_channel_library_no_server(board: Path, tmp_path: Path) -> None:
    top, full = imported(["--help"], board, tmp_path)
    assert not top & NEVER_FOR_HELP, top & NEVER_FOR_HELP
    assert "aiohttp.web" not in full and "board.service" not in full and "bot.config" not in full


def test_ask_on_the_offline_model_imports_only_what_a_turn_uses(board: Path, tmp_path: Path) -> None:
    top, full = imported(["ask", "--role", "critic", "hi"], board, tmp_path)
    assert "board.service" in full  # it did answer
    unused = {"telegram", "anthropic", "openai", "aiohttp", "jsonschema", "prompt_toolkit", "prometheus_client",
              "telegramify_markdown", "httpx", "pypdf", "watchfiles"}
    assert not top & unused, top & unused


def test_souls_reads_the_workspace_without_the_board(board: Path, tmp_path: Path) -> None:
    top, full = imported(["souls"], board, tmp_path)
    assert "board.workspace.souls" in full
    board_only = {"board.service", "board.agent.runner", "bot.app", "jinja2", "aiosqlite"}
    assert not full & board_only, full & board_only
    assert not top & {"telegram", "anthropic", "openai", "aiohttp", "jsonschema", "prompt_toolkit"}


async def test_every_built_in_tool_schema_is_valid(board: Path) -> None:
    """Schemas are checked on a tool's first call (registering imports no jsonschema): check them all here."""
    import jsonschema

    from bot.app import open_board
    from bot.config import load_config

    opened = await open_board(load_config(board / "sabha.yaml"))
    try:
        names = opened.tools.names()
        assert "consult" in names
        for name in names:
            jsonschema.Draft202012Validator.check_schema(opened.tools.get(name).spec.parameters)
    finally:
        await opened.close()
