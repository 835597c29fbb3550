"""The ``sabha`` command line: the parser, and running the command it names.

``sabha chat`` talks to the board in the terminal, ``ask`` asks one question, ``run``
runs the daemon (Telegram, WhatsApp, the HTTP server), ``meeting`` holds a board meeting,
``souls`` / ``sessions`` / ``config check`` inspect a board, ``cost`` prints what the
models cost, ``init`` makes a board. ``--config PATH`` and ``-v`` work before or after
the subcommand; which board a command works on is :mod:`bot.cli.where`'s business.
Errors a person can fix (bad config, unknown role, a file where a folder should be) print
one clear line and exit with code 2, never a traceback.

Adding a subcommand: a module with ``add_parsers(sub, common)`` that adds its parser(s)
(``parents=[common]``) and sets ``handler`` on each with ``set_defaults``: a function of
the parsed ``args`` returning the exit code, async or not. List each command it adds in
:data:`SUBCOMMANDS`, with the module's name: a command run imports only its own module and
builds only its parsers. Keep the module's top-level imports light (argparse,
``bot.cli.common``, ``bot.cli.where``) and import the rest inside the handler: ``sabha
--help`` builds every parser, and pays for every import they make.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import inspect
import os
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from board import __version__
from bot.cli.common import UserError, emit
from bot.cli.where import config_command

if TYPE_CHECKING:
    from bot.channels.plugin import CliCommand
    from bot.cli.interrupt import Interrupts
    from bot.config import LoadedConfig

__all__ = ["OWN_COMMANDS", "SHORT_COMMANDS", "SUBCOMMANDS", "build_parser", "command_named", "main"]

EXIT_USAGE = 2

#: Commands that report or answer and end: not the daemon (``run``), the terminal chat, a
#: meeting or roundtable (minutes of model calls) nor ``kb`` (indexing may read big documents).
#: As the program they run with the garbage collector off (a command this short frees its
#: memory by ending; collecting while it imports the modules it needs only walks them again
#: and again) and end without the interpreter's teardown (:func:`_exit_now`). Their output,
#: the transcript, the ledger and the state db are written exactly as otherwise.
SHORT_COMMANDS = frozenset({"init", "ask", "souls", "sessions", "meetings", "actions", "decisions", "status", "inbox",
                            "doctor", "config", "memory", "media", "people", "cost", "telegram", "whatsapp", "web",
                            "predictions", "board", "demo", "schedule", "recall"})

#: Each subcommand and the module whose ``add_parsers(sub, common)`` adds it (see the module
#: docstring), in the order ``sabha --help`` lists them. Running a command imports only its own
#: module and builds only that module's parsers; ``sabha --help``, ``sabha`` alone and anything
#: that names no command build every parser (tests/test_fast_start.py checks this table against
#: what the modules add).
SUBCOMMANDS: dict[str, str] = {
    "init": "bot.cli.where",
    "chat": "bot.cli.chat",
    "ask": "bot.cli.ask",
    "souls": "bot.cli.souls",
    "sessions": "bot.cli.sessions",
    "meeting": "bot.cli.meetings",
    "meetings": "bot.cli.meetings",
    "actions": "bot.cli.meetings",
    "roundtable": "bot.cli.meetings",
    "decisions": "bot.cli.decisions",
    "recall": "bot.cli.recall_cmd",
    "schedule": "bot.cli.schedule_cmd",
    "predictions": "bot.cli.predictions",
    "board": "bot.cli.predictions",
    "demo": "bot.cli.demo",
    "status": "bot.cli.ops",
    "inbox": "bot.cli.ops",
    "doctor": "bot.cli.doctor",
    "config": "bot.cli.config_cmd",
    "kb": "bot.cli.kb",
    "tools": "bot.cli.tools",
    "memory": "bot.cli.memory",
    "media": "bot.cli.media",
    "people": "bot.cli.people",
    "web": "bot.cli.web",
    "state": "bot.cli.state",
    "mcp": "bot.cli.mcp_cmd",
}

#: Subcommands whose parser this module adds itself.
OWN_COMMANDS = ("cost", "run")


# -- commands that live here ------------------------------------------------------------


async def cmd_cost(loaded: LoadedConfig, args: argparse.Namespace) -> int:
    """Print what the models cost, grouped by role, day, model, meeting, scheduled run or purpose (or the tool calls,
    ``--by tool``)."""
    import json
    from dataclasses import asdict

    from board.spending.ledger import GROUPS, Ledger, format_report, parse_since
    from bot.app import open_state_db
    from bot.cli.ops import budget_json, budget_lines
    from bot.cli.where import has_state

    if args.by not in GROUPS and args.by != "tool":
        raise UserError(f"--by {args.by!r}: group by one of {', '.join(sorted([*GROUPS, 'tool']))}")
    if args.role is not None and args.by != "tool":
        raise UserError("--role works with --by tool: the tool calls of one role (model costs group --by role)")
    try:
        since = parse_since(args.since)
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    if not has_state(loaded):
        emit(f"no state database at {loaded.state_url()} yet: nothing has been recorded")
        return 0
    if args.by == "tool":
        return await _tool_costs(loaded, args, since)
    async with await open_state_db(loaded) as db:
        ledger = Ledger(db)
        rows = await ledger.summary(since=since, by=args.by)
        total = await ledger.total(since=since)
        if args.json:
            emit(json.dumps({"since": since.isoformat() if since else None, "by": args.by,
                               "rows": [asdict(r) for r in rows], "total": asdict(total),
                               "budget": await budget_json(ledger, loaded)}, indent=2))
            return 0
        label = "since the beginning" if since is None else f"since {since.isoformat(timespec='minutes')}"
        emit(format_report(rows, total, by=args.by, since_label=label))
        tools = await ledger.tool_summary(since=since)
        if tools:
            emit("tool calls: " + ", ".join(f"{name} {calls}" + (f" ({failed} failed)" if failed else "")
                                           for name, calls, failed in tools))
        emit()
        for line in await budget_lines(ledger, loaded):
            emit(line)
    return 0


async def _tool_costs(loaded: LoadedConfig, args: argparse.Namespace, since: Any) -> int:
    """``sabha cost --by tool``: calls, failures, latency and result bytes per tool (server.tool)."""
    import json
    from dataclasses import asdict

    from board.spending.tool_costs import format_tool_report, tool_costs
    from bot.app import open_state_db

    async with await open_state_db(loaded) as db:
        rows = await tool_costs(db, since=since, role=args.role)
    if args.json:
        emit(json.dumps({"since": since.isoformat() if since else None, "by": "tool", "role": args.role,
                         "rows": [asdict(r) for r in rows]}, indent=2))
        return 0
    label = "since the beginning" if since is None else f"since {since.isoformat(timespec='minutes')}"
    emit(format_tool_report(rows, since_label=label + (f", role {args.role}" if args.role else "")))
    return 0


async def cmd_run(loaded: LoadedConfig, args: argparse.Namespace) -> int:
    """The daemon: channels, HTTP server and soul watcher until SIGTERM / SIGINT."""
    import logging

    from board.clock import ClockRefused
    from board.storage import StorageError
    from bot.channels.base import ChannelError
    from bot.daemon import run_daemon
    from bot.intake.storage import DataDirUnwritable
    from bot.ops.logs import setup_logging
    from bot.replicas.registry import ReplicaNameTaken

    level = loaded.config.logging.level if not getattr(args, "verbose", 0) else logging.getLogger().level
    setup_logging(level, loaded.config.logging.format)
    for warning in loaded.warnings:  # in the daemon's own log format (JSON lines under systemd)
        logging.getLogger("sabha.config").warning("%s", warning)
    try:
        with _run_lock(loaded):
            return await run_daemon(loaded)
    except (ChannelError, DataDirUnwritable, ClockRefused, ReplicaNameTaken, StorageError) as exc:
        raise UserError(str(exc)) from exc
    except OSError as exc:
        raise UserError(str(exc)) from exc


def _run_lock(loaded: LoadedConfig) -> contextlib.AbstractContextManager[object]:
    """On SQLite, one ``sabha run`` per board (:mod:`bot.ops.runlock`): a second is refused with one
    line naming the running one. PostgreSQL replicas share a database by design: no lock."""
    from board.storage import Dialect
    from bot.ops.runlock import LockHeld, LockKind, ProcessLock, lock_unusable
    from bot.ops.runtime import local_base, read_runtime

    if loaded.state_url().dialect is not Dialect.SQLITE:
        return contextlib.nullcontext()
    lock = ProcessLock(loaded.data_dir, LockKind.RUN)
    try:
        lock.acquire()
    except LockHeld as held:
        info = read_runtime(loaded.data_dir)
        where = (local_base(info.host, info.port) if info is not None and info.pid == held.pid
                 else "still starting")
        raise UserError(f"another sabha run is running on this board (pid {held.pid or '?'}, {where}; data dir "
                        f"{loaded.data_dir}): stop it first (Ctrl-C there, or kill {held.pid or 'it'}); several "
                        "replicas need a PostgreSQL state store (state.url)") from None
    except OSError as exc:
        lock_unusable(lock.path, exc, "a second sabha run on this board would not be refused")
        return contextlib.nullcontext()
    return lock  # held: the with block releases it


# -- parser -----------------------------------------------------------------------


def command_named(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` runs, read the way the parser would (past ``--config PATH`` and
    ``-v``); None when it names none or starts with anything else (``--help``, ``--version``,
    an abbreviated option): then the whole parser is built, and it decides."""
    from bot.channels.registry import channel_commands

    rest = list(argv)
    while rest:
        word = rest.pop(0)
        if word == "--config":
            if not rest:
                return None
            rest.pop(0)
        elif word.startswith("--config=") or word == "--verbose" or (word.startswith("-v") and set(word[1:]) == {"v"}):
            continue
        elif word in SUBCOMMANDS or word in OWN_COMMANDS or word in channel_commands():
            return word
        else:
            return None
    return None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser (``--config`` and ``-v`` accepted before or after the command).

    ``command``: build only the parsers of the module that adds it (see :data:`SUBCOMMANDS`);
    None: every command's, as ``sabha --help`` lists them."""
    import importlib

    from bot.channels.registry import add_cli_parsers, channel_commands
    from bot.cli.suggest import SuggestingParser
    from bot.cli.where import with_board

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS,
                        help="the board's sabha.yaml, or its folder (default: $SABHA_CONFIG, else the nearest "
                             "sabha.yaml in this folder or above, else your personal board)")
    common.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS,
                        help="more logging, in full (-vv for debug)")

    parser = SuggestingParser(
        prog="sabha", parents=[common],
        description="Sabha: a board of AI advisors in your terminal, Telegram and WhatsApp. "
                    "Start with `sabha chat`; every command has --help.",
    )
    parser.add_argument("--version", action="version", version=f"sabha {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    for name in dict.fromkeys(SUBCOMMANDS.values()):
        if command is None or SUBCOMMANDS.get(command) == name:
            importlib.import_module(name).add_parsers(sub, common)
    if command is None or command in OWN_COMMANDS:
        _add_own_parsers(sub, common)
    if command is None or command in channel_commands():
        only = None if command is None else command
        for name, channel_command in add_cli_parsers(sub, common, only=only).items():
            sub.choices[name].set_defaults(handler=_channel_handler(channel_command, with_board))
    return parser


def _add_own_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """``sabha cost`` and ``sabha run``."""
    p = sub.add_parser("cost", parents=[common], help="what the models cost (from the ledger)",
                       description="Estimated model cost from the ledger, as a table; --by tool: the tool calls "
                                   "(MCP servers' and Sabha's own) with their failures, latency and result bytes.")
    p.add_argument("--since", default="7d", metavar="WHEN",
                   help="7d, 24h, 30m, 2w, a date such as 2025-01-31, or all (default: 7d)")
    p.add_argument("--by", default="role", metavar="GROUP",
                   help="group rows by role, day, model, meeting, schedule (each standing item's run on its own "
                        "line: #item, kind, topic, when) or purpose (turn, meeting, extraction, compaction...: what "
                        "the model was called for) (default: role); tool: the tool calls instead "
                        "(calls, failures, median and p95 latency, result bytes per server.tool)")
    p.add_argument("--role", metavar="ROLE", help="with --by tool: only the calls of this role")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=config_command(cmd_cost, writes=False))

    p = sub.add_parser("run", parents=[common], help="run the daemon (Telegram, WhatsApp, HTTP server) until stopped",
                       description="Run Sabha: the channels in the config (Telegram when telegram.token is set, "
                                   "WhatsApp when whatsapp.phone_number_id is), an HTTP server (server.host/port: "
                                   "/healthz, /readyz, /metrics) and the soul watcher. SIGTERM or Ctrl-C stops it "
                                   "cleanly.")
    p.set_defaults(handler=config_command(cmd_run, writes=True, channels=True))


def _channel_handler(command: CliCommand, with_board: Any) -> Any:
    """A channel's ``sabha <channel> ...`` command as a handler (it gets an opener of the board's parts)."""
    from bot.cli.where import open_config

    def with_parts(loaded: Any, body: Any) -> Any:
        return with_board(loaded, lambda board: body(board.parts))

    async def handler(args: argparse.Namespace) -> int:
        return await command(open_config(args, writes=True, channels=True), args, with_parts)

    return handler


def _setup_logging(verbosity: int) -> None:
    """stderr logging with secrets redacted: short ``sabha: warning: ...`` lines, or the full
    ones with ``-v``; ``sabha run`` applies the config's ``logging`` section once it is loaded."""
    from bot.cli.console import use_short_lines
    from bot.ops.logs import setup_logging

    use_short_lines(setup_logging({0: "WARNING", 1: "INFO"}.get(verbosity, "DEBUG")), verbosity)


def _is_user_error(exc: BaseException) -> bool:
    from board.storage import StorageError
    from board.workspace.paths import PathEscapeError
    from bot.config import ConfigError
    from bot.intake.storage import DataDirUnwritable

    # StorageError: the state store cannot be reached or refused us (its text says what to do), not a bug.
    return isinstance(exc, (ConfigError, UserError, PathEscapeError, FileNotFoundError, DataDirUnwritable,
                            StorageError))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``sabha`` console script (``argv`` None: the program's own arguments).

    Run as the program (``argv`` None), a command in :data:`SHORT_COMMANDS` runs with the
    garbage collector off and ends with :func:`_exit_now`; see :data:`SHORT_COMMANDS`; Ctrl-C at
    any moment prints one line and ends with code 130 (:mod:`bot.cli.interrupt`).
    Called with ``argv`` (tests, embedding programs) it only returns the exit code.
    """
    from bot.cli.interrupt import EXIT_INTERRUPTED, Interrupts, quiet, say_interrupted

    program = argv is None
    interrupts = Interrupts() if program else None
    try:
        if interrupts is not None:
            interrupts.install()
            gc.disable()  # parsing and the imports a command makes allocate much and free little
        words = sys.argv[1:] if argv is None else argv
        parser = build_parser(command_named(words))
        args = parser.parse_args(words)
        short = program and getattr(args, "command", None) in SHORT_COMMANDS
        if program and not short:
            gc.enable()
        code = _run(parser, args, interrupts)
        if interrupts is not None and interrupts.interrupted:
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        if not program:  # a caller's process (a test, an embedding program) is left as it was
            return EXIT_INTERRUPTED
        quiet()
        say_interrupted()
        _exit_now(EXIT_INTERRUPTED, wait=False)
    if short:
        _exit_now(code)
    return code


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace, interrupts: Interrupts | None = None) -> int:
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    _setup_logging(getattr(args, "verbose", 0) or 0)
    try:
        result = handler(args)
        if inspect.iscoroutine(result):
            if interrupts is not None:
                return int(interrupts.run(result))
            import asyncio

            return int(asyncio.run(result))
        return int(result)
    except BrokenPipeError:
        # `sabha sessions show main | head`: the reader left; stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:
        if not _is_user_error(exc):
            raise
        from bot.ops.logs import redact

        sys.stderr.write(redact(f"sabha: {exc}\n"))
        return EXIT_USAGE


def _exit_now(code: int, *, wait: bool = True) -> NoReturn:
    """End the process with ``code`` once the command is done: flush stdout and stderr, run
    the atexit handlers (logging's flush among them), then leave without the interpreter's
    teardown, which frees every object of every imported module one by one and would take
    longer than many a command. Everything the command writes is closed by then (the state
    db by ``Board.close``, transcripts by their ``with`` blocks); with another thread still
    running it exits the ordinary way instead, unless ``wait`` is False (Ctrl-C: a thread left
    behind may be blocked on stdin for ever)."""
    if wait and threading.active_count() > 1:
        raise SystemExit(code)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    if wait:  # concurrent.futures' handler joins every worker thread, even one reading stdin
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
