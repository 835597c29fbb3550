"""``sabha sessions list | show | reset | export``: conversations, their transcripts, a fresh start, a copy.

``list`` is a table with headers, newest activity first: the session key, its role, when it
was last active (the transcript's last write) and when it started. ``show`` and ``reset``
take a session key (``main``, ``board:finance``, ``board:finance:g-42``) or a role by slug
or name (``finance``, ``CFO``: the owner's own conversation with it). ``show`` prints each
entry as a line a person reads: messages, compaction summaries, tool calls and results,
consultations and meeting records (``--json`` gives the raw entries); an empty session (just
reset) says so and names the archived one before it. ``export DIR`` writes every session's
transcript (archived ones too) as ``DIR/<session id>.jsonl``: with the state on PostgreSQL (transcripts
are rows there) the same bytes SQLite mode keeps in its files. Listing, showing and exporting never
create anything: with no state database yet they say so.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.cli.common import UserError, emit, note
from bot.cli.table import local_time
from bot.cli.where import has_state, open_config, with_board

if TYPE_CHECKING:
    from board.app import Parts
    from board.conversation.sessions import SessionRef, Sessions
    from board.conversation.transcripts import TranscriptStore

__all__ = ["add_parsers", "cmd_sessions", "format_entry", "positive_int"]

NO_SESSIONS = "no sessions yet: talk to the board with `sabha chat`"


def positive_int(text: str) -> int:
    """argparse type: a whole number of 1 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not 1 or more")
    return value


async def _last_active(transcripts: TranscriptStore, session_id: str) -> str:
    when = await transcripts.last_active(session_id)
    return when.astimezone().strftime("%Y-%m-%d %H:%M") if when is not None else "-"


def _key_of(parts: Parts, given: str) -> str:
    """A session key as given, or the owner's conversation with the role ``given`` names."""
    from board.conversation.sessions import role_of_key, session_key
    from board.routing.router import unknown_role

    try:
        role_of_key(given)
        return given
    except ValueError:
        pass
    roles = parts.souls.roles()
    role = parts.router().find_role(given) or (given.lower() if given.lower() in roles else None)
    if role is None:
        raise UserError(f"{given!r} is neither a session key (main, board:<role>[:...]) nor a role. "
                        f"{unknown_role(given, parts.souls.roles())} See `sabha sessions list`")
    return session_key(role, is_owner=True)


def _clip(text: object, limit: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def format_entry(entry: dict[str, Any]) -> str:
    """One transcript entry as a line for a person."""
    ts = f"[{local_time(entry.get('ts', ''))}]"
    kind = entry.get("type")
    if kind == "message":
        if entry.get("role") == "assistant":
            meta = ", ".join(str(x) for x in (f"soul {entry.get('soul_version')}", entry.get("model")) if x)
            flag = " degraded" if entry.get("degraded") else ""
            return f"{ts} {entry.get('agent')} ({meta}{flag}): {entry.get('text')}"
        if entry.get("role") == "tool":
            return f"{ts} tool result: {_clip(entry.get('text'))}"
        return f"{ts} {entry.get('sender_name') or entry.get('sender')}: {entry.get('text')}"
    if kind == "compaction":
        if entry.get("mode") == "drop":
            what = f"{entry.get('dropped_messages', 0)} older message(s) dropped"
        else:
            what = f"{entry.get('summarized_messages', 0)} older message(s) summarised by {entry.get('model')}"
        tokens = f", history {entry.get('tokens_before')} -> {entry.get('tokens_after')} tokens"
        summary = f": {entry.get('summary')}" if entry.get("summary") else ""
        return f"{ts} -- compacted: {what}, {entry.get('kept_messages', 0)} kept{tokens}{summary}"
    if kind == "tool_call":
        arguments = _clip(json.dumps(entry.get("arguments"), ensure_ascii=False), 200)
        return f"{ts} {entry.get('agent')} calls {entry.get('name')}({arguments})"
    if kind == "tool_result":
        outcome = "ok" if entry.get("ok") else f"failed: {entry.get('error')}"
        return f"{ts} {entry.get('name')} -> {outcome}: {_clip(entry.get('result'), 200)}"
    if kind == "consult":
        answer = _clip(entry.get("answer") or entry.get("error") or entry.get("outcome"), 300)
        return (f"{ts} {entry.get('from')} consulted {entry.get('to')} (depth {entry.get('depth')}): "
                f"{_clip(entry.get('question'), 200)} -> {answer}")
    if kind == "meeting":  # its text opens with the line the model reads ("System: board meeting <id> on ..."):
        # the meeting and its topic are said once, here
        text = str(entry.get("text") or "")
        opening, _, rest = text.partition("\n")
        if str(entry.get("meeting_id")) in opening:
            text = rest
        return f"{ts} board meeting {entry.get('meeting_id')} on \u201c{entry.get('topic')}\u201d decided:\n{text}"
    return f"{ts} {kind}: {json.dumps(entry, ensure_ascii=False)}"


async def _list(parts: Parts, args: argparse.Namespace) -> int:
    from bot.cli.table import table

    refs = await parts.sessions.list(include_archived=args.all)
    if not refs:
        emit(NO_SESSIONS)
        return 0
    rows = []
    for ref in refs:
        row = [ref.key, ref.role, await _last_active(parts.transcripts, ref.session_id), local_time(ref.created_at),
               ref.session_id]
        if args.all:
            row.append(local_time(ref.archived_at) if ref.archived_at else "")
        rows.append(row)
    rows.sort(key=lambda r: r[2], reverse=True)
    header = ["KEY", "ROLE", "LAST ACTIVE", "STARTED", "SESSION"] + (["ARCHIVED"] if args.all else [])
    for line in table(header, rows):
        emit(line)
    return 0


async def _show(parts: Parts, args: argparse.Namespace) -> int:
    ref = await parts.sessions.find(args.key)  # a session id (an archived one too) ...
    if ref is None:  # ... else a key or a role: its live session
        key = _key_of(parts, args.key)
        ref = await parts.sessions.current(key)
        if ref is None:
            raise UserError(f"no session with key {key!r} yet; see `sabha sessions list`")
    if args.last is not None:
        entries = await parts.transcripts.tail(ref.session_id, args.last)
    else:
        entries = await parts.transcripts.entries(ref.session_id)
    if args.json:
        for e in entries:
            emit(json.dumps(e, ensure_ascii=False))
        return 0
    emit(f"# {ref.key}  session {ref.session_id}  ({parts.transcripts.where(ref.session_id)})")
    for e in entries:
        emit(format_entry(e))
    if not entries:
        emit(await _nothing_yet(parts.sessions, ref, last=args.last is not None))
    return 0


async def _nothing_yet(sessions: Sessions, ref: SessionRef, *, last: bool) -> str:
    """What an empty session says instead of nothing: and where its conversation went (a reset archived it)."""
    if last:
        return "(no entries)"
    said = f"(no messages yet in this session, started {local_time(ref.created_at)})"
    older = [r for r in await sessions.list(include_archived=True)
             if r.key == ref.key and r.archived_at and r.session_id != ref.session_id]
    if not older:
        return said
    previous = max(older, key=lambda r: r.archived_at or "")
    return (f"{said}; the conversation before it was archived on {local_time(previous.archived_at)}: "
            f"`sabha sessions show {previous.session_id}`")


async def _reset(parts: Parts, args: argparse.Namespace) -> int:
    from board.conversation.sessions import role_of_key

    key = _key_of(parts, args.key)
    role = role_of_key(key)
    if await parts.sessions.current(key) is None and role not in parts.souls.roles():
        raise UserError(f"no session with key {key!r} and no role {role!r}; see `sabha sessions list`")
    old, new = await parts.sessions.reset(key)
    emit(f"{key}: new session {new.session_id}" + (f" (archived {old.session_id})" if old else ""))
    return 0


def _export_dir(given: str) -> Path:
    """The folder ``export`` writes to, made if missing; :class:`UserError` when it cannot be written."""
    folder = Path(given).expanduser()
    if folder.exists() and not folder.is_dir():
        raise UserError(f"cannot export to {folder}: it is a file, not a folder; name a folder (it is made if "
                        "missing)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot make the folder {folder}: {exc.strerror or exc}; name a folder you may write "
                        "to") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UserError(f"cannot write to {folder}: permission denied; name a folder you may write to")
    return folder


async def _export(parts: Parts, args: argparse.Namespace) -> int:
    from board.conversation.transcripts import TranscriptError

    folder = _export_dir(args.dir)
    refs = await parts.sessions.list(include_archived=True)
    written = missing = 0
    for ref in sorted(refs, key=lambda r: r.session_id):
        target = folder / f"{ref.session_id}.jsonl"
        part = target.with_name(target.name + ".part")
        try:
            with open(part, "wb") as fh:  # noqa: ASYNC230 (a one-shot command: nothing else waits on its loop)
                async for chunk in parts.transcripts.lines(ref.session_id):
                    fh.write(chunk)
            part.replace(target)
        except TranscriptError as exc:
            part.unlink(missing_ok=True)
            missing += 1
            note(f"{ref.key}: {exc}; skipped")
            continue
        except OSError as exc:
            part.unlink(missing_ok=True)
            raise UserError(f"cannot write {target}: {exc.strerror or exc}; free some space or name another "
                            "folder") from None
        written += 1
    if not refs:
        emit(f"{NO_SESSIONS}; nothing exported")
        return 0
    emit(f"exported {written} session(s) to {folder}" + (f" ({missing} without a transcript)" if missing else ""))
    return 0


async def cmd_sessions(args: argparse.Namespace) -> int:
    """sessions list | show KEY | reset KEY | export DIR."""
    writes = args.sessions_command == "reset"
    loaded = open_config(args, writes=writes)
    if not writes and not has_state(loaded):
        if args.sessions_command in ("list", "export"):
            if args.sessions_command == "export":
                _export_dir(args.dir)
            emit(NO_SESSIONS + ("; nothing exported" if args.sessions_command == "export" else ""))
            return 0
        raise UserError(f"no session {args.key!r}: nothing has been said on this board yet ({loaded.data_dir})")
    action = {"list": _list, "show": _show, "reset": _reset, "export": _export}[args.sessions_command]
    return await with_board(loaded, lambda board: action(board.parts, args), warn_keys=False)


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """``sabha sessions``."""
    p = sub.add_parser("sessions", parents=[common], help="list, show, reset or export conversations",
                       description="Conversations: a session key (main, board:<role>, board:<role>:g-<chat> ...) "
                                   "points at a transcript (a JSONL file; rows when the state is on PostgreSQL). "
                                   "SHOW and RESET take a key or a role.")
    ssub = p.add_subparsers(dest="sessions_command", metavar="ACTION", required=True)
    sp = ssub.add_parser("list", parents=[common], help="conversations, last active first (--all: archived too)",
                         description="Every live conversation with its role, when it was last active and when it "
                                     "started; --all adds the archived ones.")
    sp.add_argument("--all", action="store_true", help="include archived sessions")
    sp = ssub.add_parser("show", parents=[common], help="print a conversation's transcript",
                         description="Print a conversation: messages, compaction summaries, tool calls, "
                                     "consultations and meeting records, one line each.")
    sp.add_argument("key", help="a session key (main, board:finance), a role (finance), or a session id "
                                "(an archived one too; `sabha sessions list --all`)")
    sp.add_argument("--last", type=positive_int, metavar="N", help="only the last N entries (N >= 1)")
    sp.add_argument("--json", action="store_true", help="the raw JSONL entries")
    sp = ssub.add_parser("reset", parents=[common], help="start a new conversation (the old one is archived)",
                         description="Start a new session for KEY; the old transcript is archived, never deleted.")
    sp.add_argument("key", help="a session key (main, board:finance) or a role (finance)")
    sp = ssub.add_parser("export", parents=[common], help="write every transcript to DIR as JSONL files",
                         description="Write every session's transcript, archived ones too, to DIR/<session id>.jsonl "
                                     "(DIR is made if missing; a file of the same name is replaced). The files are "
                                     "the ones SQLite mode keeps in the data folder, byte for byte, whether the "
                                     "state is on SQLite or PostgreSQL: a backup, or input for other tools.")
    sp.add_argument("dir", metavar="DIR", help="the folder to write to")
    p.set_defaults(handler=cmd_sessions)
