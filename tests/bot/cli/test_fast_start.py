"""A CLI that starts at once: each command imports only what it uses (issue 14, "Fast start").

Checked in fresh subprocesses from ``sys.modules`` at exit, never by timing (timings are in
``benchmarks/cli_start.py``). The model SDKs, python-telegram-bot, aiohttp's server, jsonschema
and Jinja2 load only for the commands and turns that need them.
"""

from __future__ import annotations

import gc
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

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


#: No command imports these unless it uses them: the model SDKs, the team-chat and PostgreSQL drivers,
#: the image library (issue 44: "a test guards which heavy modules each path may import").
NEVER_UNUSED = {"telegram", "anthropic", "openai", "google", "slack_sdk", "discord", "asyncpg", "PIL", "pypdf",
                "jsonschema", "prompt_toolkit", "telegramify_markdown", "httpx"}
NEVER_FOR_HELP = {*NEVER_UNUSED, "aiohttp", "jinja2", "pydantic", "watchfiles", "prometheus_client", "yaml",
                  "aiosqlite"}


def test_help_imports_no_sdk_no_channel_library_no_server(board: Path, tmp_path: Path) -> None:
    top, full = imported(["--help"], board, tmp_path)
    assert not top & NEVER_FOR_HELP, top & NEVER_FOR_HELP
    assert "aiohttp.web" not in full and "board.app" not in full and "bot.config" not in full
    # Each command module's top imports are paid by --help (it builds every parser): what a command needs
    # only when it runs is imported there (issue 44: --help had grown from +0.09 s to +0.21 s).
    only_when_run = {"wcwidth", "difflib", "sqlite3", "tempfile", "secrets", "board.llm.errors", "board.llm.base"}
    assert not (top | full) & only_when_run, (top | full) & only_when_run
    # Building every channel's parser needs neither the plugin records nor the state db module (asyncio).
    assert not full & {"asyncio", "board.db", "bot.channels.telegram.plugin", "bot.channels.whatsapp.plugin",
                       "logging.handlers"}, full & {"asyncio", "board.db", "logging.handlers"}


def test_ask_on_the_offline_model_imports_only_what_a_turn_uses(board: Path, tmp_path: Path) -> None:
    top, full = imported(["ask", "--role", "critic", "hi"], board, tmp_path)
    assert "board.app" in full  # it did answer
    unused = {*NEVER_UNUSED, "aiohttp", "prometheus_client", "watchfiles"}
    assert not top & unused, top & unused
    # A chat turn holds no meeting (the consult and convene tools are offered all the same), calls no web
    # search (no provider configured) and writes no chat log file.
    not_for_a_turn = {"board.room.meeting", "board.room.decision", "board.room.record", "board.room.roundtable",
                      "board.agent.web_search", "logging.handlers", "bot.daemon", "bot.intake.intake",
                      "bot.channels.telegram.channel", "bot.channels.whatsapp.channel"}
    assert not full & not_for_a_turn, full & not_for_a_turn
    # No pydantic plugin is installed: its discovery reads no package metadata (importlib.metadata, email).
    assert not full & {"importlib.metadata", "email.utils"}, full & {"importlib.metadata", "email.utils"}
    # The shipped workspace and the migrations are folders on disk: found without importlib.resources (zipfile).
    assert not full & {"importlib.resources", "zipfile"}, full & {"importlib.resources", "zipfile"}
    # The file sets only the workspace, data dir, model and roster: read without the config models.
    assert "pydantic" not in top and not full & {"bot.config.load", "bot.config.base", "bot.config.knowledge"}
    # "hi" states no fact: the secret filter's patterns (~50 ms to compile) are compiled when a fact is checked.
    filter_modules = {"board.language.secrets", "board.language.secret_use"}
    assert not full & filter_modules, full & filter_modules


def test_ask_validates_any_other_config_whole(board: Path, tmp_path: Path) -> None:
    """A file that sets anything else is validated by the config models, and ``ask`` answers."""
    config = board / "sabha.yaml"
    config.write_text(config.read_text() + "server:\n  port: 9000\n")
    top, full = imported(["ask", "--role", "critic", "hi"], board, tmp_path)
    assert "board.app" in full and "pydantic" in top and "bot.config.load" in full


def test_pydantic_plugins_are_found_as_pydantic_finds_them(tmp_path: Path) -> None:
    """A distribution declaring a ``pydantic`` entry point keeps pydantic's own discovery;
    other entry points, a distribution without any, or an absent path entry do not."""
    from bot.config.pydantic_plugins import plugins_declared

    site = tmp_path / "site"
    (site / "plain-1.0.dist-info").mkdir(parents=True)
    (site / "tool-2.0.dist-info").mkdir()
    (site / "tool-2.0.dist-info" / "entry_points.txt").write_text("[console_scripts]\ntool = tool:main\n")
    assert not plugins_declared([str(site), str(tmp_path / "absent")])
    (site / "observe-1.0.dist-info").mkdir()
    (site / "observe-1.0.dist-info" / "entry_points.txt").write_text("[pydantic]\nobserve = observe:plugin\n")
    assert plugins_declared([str(site)])
    (tmp_path / "packed.zip").write_bytes(b"PK")
    assert plugins_declared([str(tmp_path / "packed.zip")])  # a zip entry is not read here: pydantic decides


def test_a_config_error_reads_the_same_with_plugin_discovery_skipped(tmp_path: Path) -> None:
    """``ask`` on a config with an error stops with the same message whether pydantic's own
    plugin loader ran (imported first) or the discovery was skipped."""
    (tmp_path / "sabha.yaml").write_text("llm:\n  max_tokens: 3\n")
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg"), "PYTHONPATH": str(REPO)}
    env.pop("SABHA_CONFIG", None)
    messages = []
    for first in ("", "import pydantic.plugin._loader; "):
        probe = first + "import sys; from bot.cli.main import main; sys.exit(main(['ask', 'hi']))"
        done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                              timeout=120, env=env)
        assert done.returncode != 0
        messages.append(done.stderr)
    assert "llm.max_tokens" in messages[0] and messages[0] == messages[1], messages


def test_souls_reads_the_workspace_without_the_board(board: Path, tmp_path: Path) -> None:
    top, full = imported(["souls"], board, tmp_path)
    assert "board.workspace.souls" in full
    board_only = {"board.app", "board.agent.runner", "bot.app", "jinja2", "aiosqlite", "board.db",
                  "board.agent.guardrails", "board.memory.facts", "board.memory.knowledge.base",
                  "board.agent.web_search", "board.room.meeting"}
    assert not full & board_only, full & board_only
    assert not top & {*NEVER_UNUSED, "aiohttp"}, top & {*NEVER_UNUSED, "aiohttp"}


async def test_every_built_in_tool_schema_is_valid(board: Path) -> None:
    """Schemas are checked on a tool's first call (registering imports no jsonschema): check them all here."""
    import jsonschema

    from bot.app import open_board
    from bot.config.load import load_config

    opened = await open_board(load_config(board / "sabha.yaml"))
    try:
        names = opened.parts.tools.names()
        assert "consult" in names
        for name in names:
            jsonschema.Draft202012Validator.check_schema(opened.parts.tools.get(name).spec.parameters)
    finally:
        await opened.close()


def test_ask_run_as_the_program_leaves_its_answer_transcript_and_ledger_row(board: Path, tmp_path: Path) -> None:
    """As the program, ``ask`` ends without the interpreter's teardown: nothing it writes may be lost
    by that (stdout through a pipe, the transcript, the ledger row, a warning on stderr)."""
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg"), "PYTHONPATH": str(REPO)}
    env.pop("SABHA_CONFIG", None)
    for n in (1, 2):
        done = subprocess.run([sys.executable, "-m", "bot.cli", "ask", "--role", "critic", f"question {n}"],
                              cwd=board, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("🦉 Critic: ") and done.stdout.endswith("\n"), done.stdout
    transcripts = list((board / "sessions").glob("*-critic-*.jsonl"))
    assert len(transcripts) == 1
    text = transcripts[0].read_text(encoding="utf-8")
    assert "question 1" in text and "question 2" in text
    assert text.count('"role": "assistant"') + text.count('"role":"assistant"') == 2
    with sqlite3.connect(board / "sessions" / "sabha.db") as db:
        rows = db.execute("SELECT role, session_key, outcome FROM llm_calls").fetchall()
    assert rows == [("critic", "board:critic", "ok")] * 2, rows
    wrong = subprocess.run([sys.executable, "-m", "bot.cli", "ask", "--role", "wizard", "hi"], cwd=board, env=env,
                           capture_output=True, text=True, timeout=120)
    assert wrong.returncode == 2 and "no role 'wizard'" in wrong.stderr


def test_main_called_in_process_changes_no_process_state(board: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Only the program itself (``argv`` None) turns the collector off and exits at once; a caller of
    ``main([...])`` (tests, an embedding program) gets the exit code back and its process as it was."""
    from bot.cli.main import main

    monkeypatch.chdir(board)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("SABHA_CONFIG", raising=False)
    assert gc.isenabled()
    assert main(["config", "check"]) == 0  # a command in SHORT_COMMANDS (souls would quiet its loggers here)
    assert gc.isenabled()
    assert "config OK" in capsys.readouterr().out


def test_every_channel_command_is_built_from_its_cli_module() -> None:
    """``sabha --help`` builds channels' parsers from their ``cli`` modules (not the plugin records): the
    two must name the same channels."""
    import argparse

    from bot.channels.registry import add_cli_parsers, plugins

    parser = argparse.ArgumentParser()
    commands = add_cli_parsers(parser.add_subparsers(), argparse.ArgumentParser(add_help=False))
    expected = {"discord", "slack", "telegram", "whatsapp"}
    assert set(commands) == {p.name for p in plugins() if p.add_cli is not None} == expected


def _subcommands(parser: object) -> dict[str, object]:
    import argparse

    assert isinstance(parser, argparse.ArgumentParser)
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_each_command_builds_only_its_own_parser_and_the_table_says_who_adds_what() -> None:
    """``sabha <command>`` imports and builds only the module that adds it (:data:`SUBCOMMANDS`):
    the table must name every command each module adds, and nothing else."""
    import argparse
    import importlib

    from bot.channels.registry import channel_commands
    from bot.cli.main import OWN_COMMANDS, SUBCOMMANDS, build_parser

    for module in set(SUBCOMMANDS.values()):
        parser = argparse.ArgumentParser()
        importlib.import_module(module).add_parsers(parser.add_subparsers(), argparse.ArgumentParser(add_help=False))
        assert set(_subcommands(parser)) == {c for c, m in SUBCOMMANDS.items() if m == module}, module
    everything = list(_subcommands(build_parser()))
    assert everything == [*SUBCOMMANDS, *OWN_COMMANDS, *channel_commands()]
    for command in everything:
        own = _subcommands(build_parser(command))
        assert command in own
        assert set(own) <= set(everything)


@pytest.mark.parametrize("argv", [
    ["ask", "--role", "critic", "hi", "there"],
    ["--config", "x.yaml", "-vv", "ask", "-"],
    ["-v", "--config=x.yaml", "souls"],
    ["sessions", "show", "main", "--config", "y"],
    ["config", "check"],
    ["cost", "--by", "day", "--json"],
    ["run", "-v"],
    ["meeting", "should we hire?"],
    ["telegram", "--help"],
    ["whatsapp", "--help"],
])
def test_a_command_parses_alike_with_its_own_parser_and_with_all(argv: list[str]) -> None:
    from bot.cli.main import build_parser, command_named

    def parsed(parser: object) -> dict[str, object]:
        import argparse

        assert isinstance(parser, argparse.ArgumentParser)
        try:
            values = vars(parser.parse_args(argv))
        except SystemExit as exc:  # --help
            return {"exit": exc.code}
        handler = values.pop("handler", None)
        return {**values, "handler": getattr(handler, "__qualname__", handler)}

    command = command_named(argv)
    assert command is not None and command in argv
    assert parsed(build_parser(command)) == parsed(build_parser())


@pytest.mark.parametrize("argv", [[], ["--help"], ["-h", "ask"], ["--version"], ["--conf", "x", "ask"], ["asks"],
                                  ["--config"], ["--", "ask"], ["-vx", "ask"]])
def test_anything_but_a_plain_command_builds_the_whole_parser(argv: list[str]) -> None:
    from bot.cli.main import command_named

    assert command_named(argv) is None


def test_ask_builds_no_other_command(board: Path, tmp_path: Path) -> None:
    _, full = imported(["ask", "--role", "critic", "hi"], board, tmp_path)
    others = {"bot.cli.chat", "bot.cli.doctor", "bot.cli.kb", "bot.cli.sessions", "bot.cli.ops", "bot.cli.meetings",
              "bot.cli.memory", "bot.cli.config_cmd", "bot.cli.souls", "bot.channels.telegram.cli",
              "bot.channels.whatsapp.cli"}
    assert "bot.cli.ask" in full
    assert not full & others, full & others


def test_help_still_lists_every_command(board: Path, tmp_path: Path) -> None:
    from bot.channels.registry import channel_commands
    from bot.cli.main import OWN_COMMANDS, SUBCOMMANDS

    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "300"}
    done = subprocess.run([sys.executable, "-m", "bot.cli", "--help"], cwd=board, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    listed = [line.split()[0] for line in done.stdout.splitlines() if line.startswith("    ") and line.split()]
    assert listed == [*SUBCOMMANDS, *OWN_COMMANDS, *channel_commands()], done.stdout
    wrong = subprocess.run([sys.executable, "-m", "bot.cli", "asks", "hi"], cwd=board, env=env, capture_output=True,
                           text=True, timeout=120)
    assert wrong.returncode == 2 and "invalid choice: 'asks'" in wrong.stderr and "'souls'" in wrong.stderr


async def test_a_route_made_by_the_caller_is_the_one_answered(board: Path) -> None:
    """``sabha ask`` reads the souls once: it routes, then hands :meth:`Board.handle` that route."""
    from bot.app import open_board
    from bot.cli.ask import console_envelope
    from bot.config.load import load_config

    opened = await open_board(load_config(board / "sabha.yaml"))
    try:
        envelope = console_envelope("what could go wrong?", "critic")
        route = opened.parts.router().route(envelope)
        reply = await opened.handle(envelope, route=route)
        assert reply.role == "critic" and reply.kind == "answer", reply
        other = opened.parts.router().route(console_envelope("x", "finance"))
        assert (await opened.handle(envelope, route=other)).role == "finance"  # the route given is used
        dirty = console_envelope("hi \ud800", "critic")
        assert (await opened.handle(dirty, route=other)).role == "critic"  # cleaned text: routed again
    finally:
        await opened.close()


def test_souls_reads_the_layout_without_the_config_models(board: Path, tmp_path: Path) -> None:
    """``sabha souls`` checks what it reads (bot.config.layout) instead of validating the whole config:
    the config's pydantic models (bot.config.load and the channels' sections) are never imported, nor
    pydantic itself (plain soul front matter is read without it)."""
    top, full = imported(["souls"], board, tmp_path)
    assert "pydantic" not in top
    assert "bot.config.layout" in full
    whole_config = {"bot.config.load", "bot.config.base", "bot.channels.telegram.config", "bot.config.knowledge",
                    "bot.intake.config"}
    assert not full & whole_config, full & whole_config


def test_the_config_is_parsed_by_libyaml_when_pyyaml_has_it() -> None:
    import yaml

    from bot.config.file import _LOADER

    assert _LOADER is (yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader)


def test_soul_front_matter_is_parsed_by_libyaml_and_its_errors_read_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every turn reads every soul: front matter goes through libyaml when PyYAML has it; a soul
    libyaml refuses is read again by the pure-Python parser, so its error names the same place."""
    import yaml

    from board.workspace import souls
    from board.workspace.files import FileProblem

    if not yaml.__with_libyaml__:
        pytest.skip("PyYAML without libyaml")
    pure_calls: list[str] = []
    real_safe_load = yaml.safe_load

    def counting_safe_load(text: str) -> object:
        pure_calls.append(text)
        return real_safe_load(text)

    monkeypatch.setattr(yaml, "safe_load", counting_safe_load)
    soul = souls.parse_soul(b"---\nname: Critic\ntemperature: 0.5\n---\nI doubt.\n")
    assert (soul.meta.name, soul.meta.temperature, pure_calls) == ("Critic", 0.5, [])
    broken = b"---\nname: Critic\n\temoji: x\n---\nI doubt.\n"
    with pytest.raises(FileProblem) as fast:
        souls.parse_soul(broken)
    assert len(pure_calls) == 1
    monkeypatch.setattr(souls, "_FAST_LOADER", None)
    with pytest.raises(FileProblem) as pure:
        souls.parse_soul(broken)
    assert str(fast.value) == str(pure.value) and "line 3" in str(fast.value), (fast.value, pure.value)


def test_souls_does_not_compile_the_secret_filter(board: Path, tmp_path: Path) -> None:
    """``sabha souls`` names the offline provider through the layout it reads; the provider reads statements only when
    asked to extract facts, so the secret filter's patterns (~35 ms of regex compiling, more with each round of rules)
    are compiled by the commands that store memory, not by ``sabha souls`` (cli_start: +0.115 s over a bare
    interpreter with them, +0.076 s without)."""
    _top, full = imported(["souls"], board, tmp_path)
    assert "board.workspace.souls" in full
    assert not full & {"board.language.statements", "board.language.secrets", "board.language.secret_use"}
