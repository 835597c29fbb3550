"""The ``sabha`` command line.

``sabha chat`` talks to the board in the terminal, ``sabha ask`` asks one question,
``sabha run`` runs the daemon (Telegram, HTTP server), ``sabha meeting`` holds a board
meeting, ``sabha souls`` / ``sessions`` / ``config check`` inspect a setup, ``sabha
cost`` prints what the models cost and ``sabha init`` creates a setup. ``--config
PATH`` works before or after the subcommand. Errors a person can fix (bad config,
unknown role, escaping paths) print one clear message and exit with code 2, never a
traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict
from pathlib import Path

import yaml

from board import __version__
from board.envelope import Envelope, Reply
from board.llm.registry import split_model
from board.memory.ledger import GROUPS, Ledger, format_report, parse_since
from board.memory.sessions import role_of_key
from board.memory.transcripts import iter_entries
from board.service import DB_FILE, Board
from board.workspace.paths import PathEscapeError, copy_default_workspace
from bot.app import missing_keys, open_board, open_state_db
from bot.channels.plugin import CliCommand
from bot.channels.registry import PLUGINS as CHANNEL_PLUGINS
from bot.cli import doctor as doctor_cli
from bot.cli import meetings as meeting_cli
from bot.cli import ops as ops_cli
from bot.cli.common import UserError, emit
from bot.config import (
    DEFAULT_CONFIG_NAME,
    ConfigError,
    LoadedConfig,
    load_config,
    masked_dump,
)
from bot.ops.logs import protect_config, redact, setup_logging

log = logging.getLogger("sabha.cli")

EXIT_USAGE = 2

INIT_CONFIG = """\
# Sabha configuration. Every option is documented in config.example.yaml.
# Secrets come from the environment: write ${VAR} and export VAR.
workspace: ./workspace      # souls, AGENTS.md, USER.md, templates (edit them while Sabha runs)
data_dir: ./sessions        # transcripts (JSONL) and the state database

llm:
  model: offline            # e.g. anthropic:claude-sonnet-4-5 or openai:gpt-4o-mini

board:
  roster: board             # board | sabha | roundtable | a roster of your own
"""


# -- output -----------------------------------------------------------------------


async def with_board(loaded: LoadedConfig, body: Callable[[Board], Awaitable[int]]) -> int:
    """Open the board, run ``body`` on it (printing meetings it starts), wait for running
    meetings, close it."""
    board = await open_board(loaded)
    board.room.subscribe(meeting_cli.console_meeting_printer())
    try:
        code = await body(board)
        if board.room.running():
            sys.stderr.write("sabha: waiting for the board meeting to finish (Ctrl-C cancels it)\n")
            await board.room.drain()
        return code
    finally:
        await board.close()


def _console_envelope(text: str, role: str | None) -> Envelope:
    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name is fine in containers
        user = "owner"
    return Envelope(channel="console", text=text, sender=user, sender_name=user, is_owner=True, role_hint=role)


# -- commands ---------------------------------------------------------------------


def _check_role(board: Board, role: str | None) -> None:
    if role is not None and not board.souls.has(role):
        raise UserError(f"there is no role {role!r}; roles: {', '.join(board.souls.roles())}")


async def cmd_chat(loaded: LoadedConfig, args: argparse.Namespace) -> int:
    """Interactive chat; with piped stdin, answer each line and exit at EOF."""

    async def body(board: Board) -> int:
        _check_role(board, args.role)
        interactive = sys.stdin.isatty()
        stop = asyncio.Event()
        watcher = asyncio.create_task(board.souls.watch(stop))
        try:
            if interactive:
                emit(f"Sabha {__version__}: the board is listening (roster: {board.settings.roster.name}). "
                       "/help for help, /quit or Ctrl-D to leave.")
            while True:
                if interactive:
                    try:
                        line = await asyncio.to_thread(input, "you> ")
                    except EOFError:
                        emit()
                        break
                else:
                    line = await asyncio.to_thread(sys.stdin.readline)
                    if not line:
                        break
                line = line.strip()
                if not line:
                    continue
                if line in ("/quit", "/exit"):
                    break
                try:
                    reply = await board.handle(_console_envelope(line, args.role))
                except Exception:  # one failed message must not end the conversation
                    log.exception("answering %r failed", line[:80])
                    sys.stderr.write("sabha: that message could not be answered (the error is logged above); "
                                     "try again\n")
                    continue
                emit(reply.render())
        except KeyboardInterrupt:
            emit()
        finally:
            stop.set()
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
        return 0

    return await with_board(loaded, body)


async def cmd_ask(loaded: LoadedConfig, args: argparse.Namespace) -> int:
    """One question, one answer on stdout."""
    text = " ".join(args.text).strip()
    if not text or text == "-":
        if sys.stdin.isatty():
            raise UserError('nothing to ask: give the question as arguments, e.g. sabha ask "what is our runway?"')
        text = sys.stdin.read().strip()
    if not text:
        raise UserError("nothing to ask: give the question as arguments or on stdin")

    async def body(board: Board) -> int:
        _check_role(board, args.role)
        reply: Reply = await board.handle(_console_envelope(text, args.role))
        emit(reply.render())
        return 1 if reply.kind == "error" or reply.degraded else 0

    return await with_board(loaded, body)


async def cmd_souls(loaded: LoadedConfig, args: argparse.Namespace) -> int:
    """List roles, soul files, versions and load errors."""

    async def body(board: Board) -> int:
        rows = board.souls.status()
        if args.json:
            emit(json.dumps([{"role": r.role, "file": str(r.path), "version": r.version, "source": r.source,
                                "error": r.error} for r in rows], indent=2, ensure_ascii=False))
            return 0
        profiles = {p.role: p for p in board.souls.profiles()}
        bad_models = False
        emit(f"roster: {board.settings.roster.name}   workspace: {board.settings.workspace}")
        for r in rows:
            p = profiles.get(r.role)
            label = f"{p.emoji} {p.name}" if p else r.role
            try:
                shown = r.path.relative_to(board.settings.workspace)
            except ValueError:
                shown = r.path
            version = r.version or "-"
            source = "" if r.source == "workspace" else f"  ({r.source})"
            model = board.runner.model_for(p) if p else "-"
            emit(f"{r.role:<12} {label:<18} {version:<13} {model:<28} {shown}{source}")
            if r.error:
                emit(f"{'':<12} error: {r.error}")
            if p and split_model(model)[0] not in board.providers.known():
                bad_models = True
                emit(f"{'':<12} error: model {model!r} names no known provider "
                       f"({', '.join(board.providers.known())}); write it as provider:model, e.g. openai:gpt-4o")
        return 1 if bad_models or any(r.version is None for r in rows) else 0

    return await with_board(loaded, body)


async def cmd_sessions(loaded: LoadedConfig, args: argparse.Namespace) -> int:
    """sessions list | show KEY | reset KEY."""

    async def body(board: Board) -> int:
        if args.sessions_command == "list":
            refs = await board.sessions.list(include_archived=args.all)
            if not refs:
                emit("no sessions yet: talk to the board with `sabha chat`")
                return 0
            for listed in refs:
                state = f"  archived {listed.archived_at}" if listed.archived_at else ""
                emit(f"{listed.key:<32} {listed.session_id:<40} {listed.created_at}{state}")
            return 0
        if args.sessions_command == "reset":
            try:
                role = role_of_key(args.key)
            except ValueError as exc:
                raise UserError(f"{exc}; see `sabha sessions list`") from exc
            if await board.sessions.current(args.key) is None and role not in board.souls.roles():
                raise UserError(f"no session with key {args.key!r} and no role {role!r}; see `sabha sessions list`")
            old, new = await board.sessions.reset(args.key)
            emit(f"{args.key}: new session {new.session_id}" + (f" (archived {old.session_id})" if old else ""))
            return 0
        ref = await board.sessions.current(args.key)
        if ref is None:
            raise UserError(f"no session with key {args.key!r}; see `sabha sessions list`")
        path = board.transcripts.path_for(ref.session_id)
        entries = [e for e in iter_entries(path) if e.get("type") != "session"]
        if args.last is not None:
            entries = entries[-args.last:] if args.last > 0 else []
        if args.json:
            for e in entries:
                emit(json.dumps(e, ensure_ascii=False))
            return 0
        emit(f"# {ref.key}  session {ref.session_id}  ({path})")
        for e in entries:
            emit(_format_entry(e))
        return 0

    return await with_board(loaded, body)


def _format_entry(entry: dict[str, object]) -> str:
    ts = str(entry.get("ts", ""))
    if entry.get("type") == "message":
        if entry.get("role") == "assistant":
            meta = ", ".join(str(x) for x in (f"soul {entry.get('soul_version')}", entry.get("model")) if x)
            return f"[{ts}] {entry.get('agent')} ({meta}): {entry.get('text')}"
        return f"[{ts}] {entry.get('sender_name') or entry.get('sender')}: {entry.get('text')}"
    return f"[{ts}] {entry.get('type')}: {json.dumps(entry, ensure_ascii=False)}"


async def cmd_config_check(loaded: LoadedConfig, args: argparse.Namespace) -> int:
    """Validate and print the effective config, secrets masked."""
    settings = loaded.board_settings()
    from board.workspace.souls import (
        SoulStore,  # validates soul paths without opening the db
    )

    SoulStore(settings.workspace, settings.roster)
    emit(f"# config: {loaded.source or '(built-in defaults)'}")
    emit(f"# workspace: {loaded.workspace}{'' if loaded.workspace.is_dir() else '  (missing: run sabha init)'}")
    emit(f"# data_dir: {loaded.data_dir}")
    emit(redact(yaml.safe_dump(masked_dump(loaded.config), sort_keys=False, allow_unicode=True).rstrip()))
    for problem in missing_keys(loaded):
        emit(f"# warning: {problem}")
    emit("config OK")
    return 0


async def cmd_cost(loaded: LoadedConfig, args: argparse.Namespace) -> int:
    """Print what the models cost, grouped by role, day, model or meeting."""
    try:
        since = parse_since(args.since)
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    db_path = loaded.data_dir / DB_FILE
    if not db_path.exists():
        emit(f"no state database at {db_path} yet: nothing has been recorded")
        return 0
    async with await open_state_db(loaded) as db:
        ledger = Ledger(db)
        rows = await ledger.summary(since=since, by=args.by)
        total = await ledger.total(since=since)
        if args.json:
            emit(json.dumps({"since": since.isoformat() if since else None, "by": args.by,
                               "rows": [asdict(r) for r in rows], "total": asdict(total),
                               "budget": await ops_cli.budget_json(ledger, loaded)}, indent=2))
            return 0
        label = "since the beginning" if since is None else f"since {since.isoformat(timespec='minutes')}"
        emit(format_report(rows, total, by=args.by, since_label=label))
        tools = await ledger.tool_summary(since=since)
        if tools:
            emit("tool calls: " + ", ".join(f"{name} {calls}" + (f" ({failed} failed)" if failed else "")
                                           for name, calls, failed in tools))
        emit()
        for line in await ops_cli.budget_lines(ledger, loaded):
            emit(line)
    return 0


async def cmd_run(loaded: LoadedConfig, args: argparse.Namespace) -> int:
    """The daemon: channels, HTTP server and soul watcher until SIGTERM / SIGINT."""
    from bot.channels.base import ChannelError
    from bot.daemon import run_daemon

    level = loaded.config.logging.level if not getattr(args, "verbose", 0) else logging.getLogger().level
    setup_logging(level, loaded.config.logging.format)
    try:
        return await run_daemon(loaded)
    except ChannelError as exc:
        raise UserError(str(exc)) from exc
    except OSError as exc:
        raise UserError(str(exc)) from exc


def cmd_init(args: argparse.Namespace) -> int:
    """Write sabha.yaml and a copy of the default workspace into DIR."""
    target = Path(args.dir).expanduser()
    target.mkdir(parents=True, exist_ok=True)
    config_path = target / DEFAULT_CONFIG_NAME
    if config_path.exists() and not args.force:
        emit(f"kept existing {config_path}")
    else:
        config_path.write_text(INIT_CONFIG, encoding="utf-8")
        emit(f"wrote {config_path}")
    written = copy_default_workspace(target / "workspace", overwrite=args.force)
    emit(f"wrote {len(written)} workspace files under {target / 'workspace'}" if written
           else f"kept the existing workspace at {target / 'workspace'}")
    emit(f"next: cd {target} && sabha chat")
    return 0


# -- parser -----------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (``--config`` and ``-v`` accepted before or after the command)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS,
                        help=f"config file (default: $SABHA_CONFIG or ./{DEFAULT_CONFIG_NAME} or built-in defaults)")
    common.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS,
                        help="more logging (-vv for debug)")

    parser = argparse.ArgumentParser(
        prog="sabha", parents=[common],
        description="Sabha: a board of AI advisors in your terminal, Telegram and WhatsApp.",
    )
    parser.add_argument("--version", action="version", version=f"sabha {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("init", parents=[common], help="create sabha.yaml and a workspace",
                       description="Write sabha.yaml and a copy of the default workspace into DIR.")
    p.add_argument("dir", nargs="?", default=".", metavar="DIR")
    p.add_argument("--force", action="store_true", help="overwrite existing files")

    p = sub.add_parser("chat", parents=[common], help="talk to the board in the terminal",
                       description="Talk to the board. @role or /ask role addresses a role; /help lists commands. "
                                   "With piped input, answers each line and exits at end of input.")
    p.add_argument("--role", help="the role that answers plain messages (default: general)")

    p = sub.add_parser("ask", parents=[common], help="ask one question and print the answer",
                       description="Ask one question; the answer prints as '<emoji> <Name>: <text>'.")
    p.add_argument("--role", help="the role that answers (default: general)")
    p.add_argument("text", nargs="*", help="the question ('-' or nothing reads stdin)")

    p = sub.add_parser("souls", parents=[common], help="list roles, soul files, versions and errors",
                       description="List every role with its soul file, the version in use and any load error.")
    p.add_argument("--json", action="store_true", help="machine-readable output")

    p = sub.add_parser("sessions", parents=[common], help="list, show or reset conversations",
                       description="Inspect conversations (session keys map to JSONL transcripts).")
    ssub = p.add_subparsers(dest="sessions_command", metavar="ACTION", required=True)
    sp = ssub.add_parser("list", parents=[common], help="live sessions (--all includes archived)")
    sp.add_argument("--all", action="store_true", help="include archived sessions")
    sp = ssub.add_parser("show", parents=[common], help="print a session's transcript")
    sp.add_argument("key", help="session key, e.g. main or board:finance")
    sp.add_argument("--last", type=int, metavar="N", help="only the last N entries")
    sp.add_argument("--json", action="store_true", help="raw JSONL entries")
    sp = ssub.add_parser("reset", parents=[common], help="start a new session for KEY (the old one is archived)")
    sp.add_argument("key", help="session key, e.g. main or board:finance")

    p = sub.add_parser("cost", parents=[common], help="what the models cost (from the ledger)",
                       description="Estimated model cost from the ledger, as a table.")
    p.add_argument("--since", default="7d", metavar="WHEN",
                   help="7d, 24h, 30m, 2w, a date such as 2025-01-31, or all (default: 7d)")
    p.add_argument("--by", choices=sorted(GROUPS), default="role", help="group rows by (default: role)")
    p.add_argument("--json", action="store_true", help="machine-readable output")

    sub.add_parser("run", parents=[common], help="run the daemon (Telegram, HTTP server) until stopped",
                   description="Run Sabha: the channels in the config (Telegram when telegram.token is set), an "
                               "HTTP server (server.host/port, GET /healthz) and the soul watcher. "
                               "SIGTERM or Ctrl-C stops it cleanly.")

    for channel in CHANNEL_PLUGINS:
        if channel.add_cli is not None:
            CHANNEL_COMMANDS[channel.name] = channel.add_cli(sub, common)

    meeting_cli.add_parsers(sub, common)
    ops_cli.add_parsers(sub, common)
    doctor_cli.add_parser(sub, common)

    p = sub.add_parser("config", parents=[common], help="check the configuration",
                       description="Validate the configuration and print the effective values.")
    csub = p.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    csub.add_parser("check", parents=[common], help="validate and print the effective config (secrets masked)")
    return parser


Command = Callable[[LoadedConfig, argparse.Namespace], Awaitable[int]]
CHANNEL_COMMANDS: dict[str, CliCommand] = {}  # filled by build_parser; they get with_board
COMMANDS: dict[str, Command] = {
    "chat": cmd_chat,
    "ask": cmd_ask,
    "souls": cmd_souls,
    "sessions": cmd_sessions,
    "config": cmd_config_check,
    "run": cmd_run,
    "cost": cmd_cost,
    "status": ops_cli.cmd_status,
    "inbox": ops_cli.cmd_inbox,
    "meeting": lambda loaded, args: with_board(loaded, lambda b: meeting_cli.cmd_meeting(b, args)),
    "meetings": lambda loaded, args: with_board(loaded, lambda b: meeting_cli.cmd_meetings(b, args)),
    "actions": lambda loaded, args: with_board(loaded, lambda b: meeting_cli.cmd_actions(b, args)),
    "roundtable": lambda loaded, args: with_board(loaded, lambda b: meeting_cli.cmd_roundtable(b, args)),
}


def _setup_logging(verbosity: int, default_level: str) -> None:
    """stderr logging (text, or JSON under systemd) with secrets redacted; ``sabha run``
    applies the config's ``logging`` section once it is loaded."""
    level = {0: default_level, 1: "INFO"}.get(verbosity, "DEBUG")
    setup_logging(level)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``sabha`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return EXIT_USAGE
    _setup_logging(getattr(args, "verbose", 0) or 0, "WARNING")
    try:
        if args.command == "init":
            return cmd_init(args)
        if args.command == "doctor":  # loads the config itself: an invalid one is a finding, not an exit 2
            return asyncio.run(doctor_cli.cmd_doctor(args))
        loaded = load_config(getattr(args, "config", None))
        protect_config(loaded.config)

        async def run() -> int:
            if args.command in CHANNEL_COMMANDS:
                return await CHANNEL_COMMANDS[args.command](loaded, args, with_board)
            return await COMMANDS[args.command](loaded, args)

        return asyncio.run(run())
    except (ConfigError, UserError, PathEscapeError, FileNotFoundError) as exc:
        sys.stderr.write(redact(f"sabha: {exc}\n"))
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `sabha sessions show main | head`: the reader left; stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
