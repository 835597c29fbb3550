"""Which board a command works on, and making one (``sabha init``, the personal board).

A board is a ``sabha.yaml`` with its workspace (souls you edit) and data dir (transcripts,
the state db). A command finds it like git finds a repository: ``--config``,
``$SABHA_CONFIG``, the nearest ``sabha.yaml`` upwards, then the personal board
(:func:`bot.config.locate_config`). When none is found, a command that writes (``chat``,
``ask``, ``meeting`` ...) makes the personal board and says where; a read-only command
(``souls``, ``sessions list`` ...) says that no board was found and creates nothing.

``sabha init DIR`` never points a board at the workspace Sabha ships (in a clone of the
repository that is ``workspace/``): the shipped souls are what a broken soul falls back to,
so a board of one's own gets ``my-workspace/`` there instead. Everything heavy (pydantic,
the board) is imported inside the functions, so building the parser stays cheap.
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.cli.common import UserError, emit, note

if TYPE_CHECKING:
    from board.app import Board, Parts
    from bot.config import LoadedConfig
    from bot.config.layout import BoardLayout

__all__ = [
    "SUGGESTED_MODEL",
    "AsyncHandler",
    "Handler",
    "add_parsers",
    "board_command",
    "config_command",
    "example_config_path",
    "init_board",
    "open_config",
    "open_layout",
    "shipped_workspace_in_use",
    "with_board",
]

#: The model suggested wherever Sabha names one (init's sabha.yaml, config.example.yaml, README).
SUGGESTED_MODEL = "anthropic:claude-sonnet-4-6"

#: What a subcommand's parser sets as ``handler``: the command, async or not, returning the exit code.
Handler = Callable[[argparse.Namespace], Awaitable[int] | int]
AsyncHandler = Callable[[argparse.Namespace], Awaitable[int]]

INIT_CONFIG = """\
# Sabha configuration: this folder is a board. Every option is documented in
# config.example.yaml beside this file. Secrets come from the environment: write ${{VAR}}
# and export VAR; never put a key or token in this file.
workspace: ./{workspace}      # souls, AGENTS.md, USER.md, templates: edit them while Sabha runs
data_dir: ./sessions        # transcripts (JSONL), the state database, the chat's history and log

llm:
  model: offline            # needs no key; for real advice e.g. {model} (export ANTHROPIC_API_KEY)

board:
  roster: board             # board | sabha | roundtable | a roster of your own
"""


def example_config_path() -> Path | None:
    """``config.example.yaml`` as shipped: inside the installed package, else the repository's."""
    here = Path(__file__).resolve().parent.parent  # bot/
    for candidate in (here / "config.example.yaml", here.parent / "config.example.yaml"):
        if candidate.is_file():
            return candidate
    return None


def _shipped_workspace() -> Path:
    from board.workspace.paths import default_workspace_dir

    return default_workspace_dir().resolve()


def _same_place(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def shipped_workspace_in_use(workspace: Path) -> bool:
    """True when ``workspace`` is the workspace Sabha ships (its souls are the fallback of broken ones)."""
    return _same_place(workspace, _shipped_workspace())


def init_board(target: Path, *, force: bool = False, quiet: bool = False) -> Path:
    """Write ``sabha.yaml``, ``config.example.yaml`` and a copy of the shipped workspace into
    ``target``; returns the config file. Existing files are kept unless ``force``."""
    from board.workspace.paths import copy_default_workspace
    from bot.config import DEFAULT_CONFIG_NAME

    say = (lambda _text: None) if quiet else emit
    target = target.expanduser().absolute()
    if target.exists() and not target.is_dir():
        raise UserError(f"{target} is a file, not a folder: sabha init writes {DEFAULT_CONFIG_NAME} and a "
                        "workspace into a folder; give a new or existing folder")
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create the folder {target}: {exc.strerror or exc}") from exc
    config_path = target / DEFAULT_CONFIG_NAME
    workspace_name = "workspace"
    if shipped_workspace_in_use(target / workspace_name):
        workspace_name = "my-workspace"
        say(f"{target / 'workspace'} holds the souls Sabha ships (what a broken soul falls back to); "
            f"your own go to {target / workspace_name}")
    try:
        if config_path.exists() and not force:
            say(f"kept the existing {config_path}")
        else:
            config_path.write_text(INIT_CONFIG.format(workspace=workspace_name, model=SUGGESTED_MODEL),
                                   encoding="utf-8")
            say(f"wrote {config_path}")
        example = example_config_path()
        example_target = target / "config.example.yaml"
        if example is None:
            say(f"warning: this install of Sabha lacks config.example.yaml (it ships inside the package as "
                f"bot/config.example.yaml), so {example_target} was not written; reinstall Sabha")
        elif not _same_place(example, example_target) and (force or not example_target.exists()):
            import shutil  # only `sabha init` copies a file: not imported by every command

            shutil.copyfile(example, example_target)
            say(f"wrote {example_target} (every option, commented)")
        written = copy_default_workspace(target / workspace_name, overwrite=force)
    except OSError as exc:
        raise UserError(f"cannot write into {target}: {exc.strerror or exc}") from exc
    say(f"wrote {len(written)} workspace files under {target / workspace_name}" if written
        else f"kept the existing workspace at {target / workspace_name}")
    return config_path


def _no_board(loaded: LoadedConfig) -> str:
    from bot.config import CONFIG_ENV, DEFAULT_CONFIG_NAME, personal_board_dir

    return (f"no board found: no {DEFAULT_CONFIG_NAME} in {loaded.base_dir} or any folder above it, "
            f"${CONFIG_ENV} is not set, and there is no personal board at {personal_board_dir()} yet. "
            "`sabha chat` starts your personal board; `sabha init DIR` makes a board in DIR")


def open_config(args: argparse.Namespace, *, writes: bool, channels: bool = False,
                plain: bool = False) -> LoadedConfig:
    """The config of the board this command works on (see the module docstring).

    ``writes``: the command may create data, so with no board found the personal board is
    made; otherwise a missing board is a :class:`UserError`. ``channels``: the command
    needs the channel sections (an unset ``${VAR}`` there is then an error). ``plain``
    (``sabha ask``): a file :func:`bot.config.plain.read_plain` vouches for is read without
    the config models; any other is validated whole, errors and all.
    """
    from bot.config.file import FoundBy
    from bot.ops.logs import protect_config

    if plain:
        from bot.config.plain import read_plain

        found = read_plain(getattr(args, "config", None))
        if found is not None:
            loaded, data = found
            _opened(loaded, writes)
            protect_config(data)
            return loaded
    from bot.config import personal_board_dir
    from bot.config.load import load_config

    loaded = load_config(getattr(args, "config", None), channels=channels)
    if loaded.source is None:
        if not writes:
            raise UserError(_no_board(loaded))
        home = personal_board_dir()
        config_path = init_board(home, quiet=True)
        note(f"no sabha.yaml in {loaded.base_dir} or any folder above it: made your personal board at {home} "
             "(sabha.yaml, workspace/, sessions/). `sabha init DIR` makes a board of its own")
        loaded = replace(load_config(config_path, channels=channels), found_by=FoundBy.PERSONAL)
        _opened(loaded, writes, made=True)
    else:
        _opened(loaded, writes)
    protect_config(loaded.config)
    return loaded


def _opened(loaded: LoadedConfig, writes: bool, *, made: bool = False) -> None:
    """What :func:`open_config` says and checks of the board it found (``made``: just now)."""
    from bot.config.file import FoundBy

    if loaded.found_by is FoundBy.PERSONAL and writes and not made:
        note(f"using your personal board at {loaded.base_dir} (no sabha.yaml in {Path.cwd()} or any folder above it)")
    _check_data_dir(loaded.data_dir, loaded.source)
    if writes and shipped_workspace_in_use(loaded.workspace):
        note(f"warning: the workspace {loaded.workspace} is the one Sabha ships: a broken soul there has no "
             "default to fall back to. Run `sabha init` for a workspace of your own")


def _check_data_dir(data_dir: Path, source: Path | None) -> None:
    if data_dir.exists() and not data_dir.is_dir():
        raise UserError(f"data_dir {data_dir} is a file, not a folder; point data_dir in {source} at "
                        "a folder for transcripts and the state database")


def open_layout(args: argparse.Namespace) -> BoardLayout:
    """For a read-only command that needs only the workspace, data dir, roster and default model
    (``sabha souls``): those read and checked without validating the rest of the config
    (:mod:`bot.config.layout`), else, when that reading cannot vouch for the file, as
    :func:`open_config` reads it (``writes=False``), errors and all."""
    from bot.config.layout import layout_of, read_layout
    from bot.ops.logs import protect_config

    layout = read_layout(getattr(args, "config", None))
    if layout is None:
        return layout_of(open_config(args, writes=False))
    _check_data_dir(layout.data_dir, layout.source)
    protect_config(layout.data)
    return layout


async def with_board(loaded: LoadedConfig, body: Callable[[Board], Awaitable[int]], *,
                     warn_keys: bool = True) -> int:
    """Open the board, run ``body`` on it (printing meetings it starts), wait for running
    meetings, close it. A configured model without its API key is told once first
    (``warn_keys``), with the fix."""
    from bot.app import open_board
    from bot.cli.keys import key_advice, keyless_models, told_once
    from bot.cli.meeting_view import console_meeting_printer

    told: list[str] = []
    if warn_keys:
        for model, key_env in keyless_models(loaded, loaded.models()):
            note(f"warning: {key_advice(loaded, model, key_env)}")
            told.append(key_env)
    board = await open_board(loaded, report_missing_keys=False)
    room = board.parts.room
    room.subscribe(console_meeting_printer())
    try:
        with told_once(told, logging.getLogger().handlers):  # said above: not again under every answer
            code = await body(board)
            if room.running():
                note("waiting for the board meeting to finish (Ctrl-C cancels it)")
                await room.drain()
        return code
    finally:
        await board.close()


def has_state(loaded: LoadedConfig) -> bool:
    """Whether the board has a state database yet (read-only commands never create one). A PostgreSQL state store
    (``state.url``) always has one: the server holds it, and opening it says so when it cannot be reached."""
    from board.storage import Dialect

    url = loaded.state_url()
    return url.dialect is Dialect.POSTGRES or (url.path is not None and url.path.is_file())


def config_command(body: Callable[[LoadedConfig, argparse.Namespace], Awaitable[int]], *, writes: bool,
                   channels: bool = False) -> AsyncHandler:
    """A handler that finds the board's config, then runs ``body(loaded, args)``."""

    async def handler(args: argparse.Namespace) -> int:
        return await body(open_config(args, writes=writes, channels=channels), args)

    return handler


def board_command(body: Callable[[Parts, argparse.Namespace], Awaitable[int]], *, writes: bool,
                  empty: str | None = None) -> AsyncHandler:
    """A handler that opens the board and runs ``body(parts, args)`` on its parts. A read-only command
    (``writes`` False) on a board with no state db yet prints ``empty`` and opens nothing."""

    async def handler(args: argparse.Namespace) -> int:
        loaded = open_config(args, writes=writes)
        if not writes and not has_state(loaded):
            emit(empty or f"nothing recorded yet in {loaded.data_dir}")
            return 0
        return await with_board(loaded, lambda board: body(board.parts, args))

    return handler


# -- sabha init -----------------------------------------------------------------------


def cmd_init(args: argparse.Namespace) -> int:
    """``sabha init [DIR]``: a board in DIR (the current folder by default)."""
    target = Path(args.dir)
    config_path = init_board(target, force=args.force)
    where = target.expanduser()
    shown = "." if where.resolve() == Path.cwd().resolve() else str(where)
    emit(f"next: {'' if shown == '.' else f'cd {shown} && '}sabha chat   (sabha finds {config_path.name} "
         "from this folder and every folder below it)")
    return 0


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """``sabha init``."""
    p = sub.add_parser(
        "init", parents=[common], help="make a board: sabha.yaml and a workspace of souls in DIR",
        description="Make a board in DIR (default: this folder): sabha.yaml (the settings), config.example.yaml "
                    "(every option, commented), a workspace/ of soul files to edit, and sessions/ for transcripts "
                    "once you talk to it. Sabha commands run in DIR or any folder below it use this board. "
                    "Existing files are kept unless --force.")
    p.add_argument("dir", nargs="?", default=".", metavar="DIR",
                   help="the board's folder, created if missing (default: the current folder)")
    p.add_argument("--force", action="store_true", help="overwrite existing files with the shipped ones")
    p.set_defaults(handler=cmd_init)

