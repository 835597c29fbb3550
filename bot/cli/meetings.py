"""``sabha meeting``, ``sabha meetings list|show``, ``sabha actions`` and ``sabha roundtable``.

``meeting`` holds a board meeting in the terminal and prints each statement as it is
made, then the minutes. ``roundtable`` reads seed 004's JSON from a file or stdin and
prints JSON; bad input prints a JSON error object and exits with code 2.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from board.room.meeting import MeetingEvent
from board.room.roundtable import RoundtableInputError, parse_input, run_roundtable
from board.service import Board
from bot.cli.common import emit


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add the meeting commands to the ``sabha`` parser."""
    p = sub.add_parser("meeting", parents=[common], help="hold a board meeting on a topic",
                       description="Hold a board meeting: the chair frames it, specialists debate in rounds, "
                                   "the chair records a decision. Prints statements as they come, then the minutes.")
    p.add_argument("topic", nargs="+", help="what the board should decide")
    p.add_argument("--roster", help="board, sabha, roundtable or a roster from config (default: board.roster)")
    p.add_argument("--quiet", action="store_true", help="print only the minutes")

    p = sub.add_parser("meetings", parents=[common], help="list past meetings or show one",
                       description="Past board meetings from the state database.")
    msub = p.add_subparsers(dest="meetings_command", metavar="ACTION", required=True)
    mp = msub.add_parser("list", parents=[common], help="recent meetings")
    mp.add_argument("--limit", type=int, default=20, metavar="N")
    mp = msub.add_parser("show", parents=[common], help="the minutes of one meeting")
    mp.add_argument("id", help="meeting id (a unique prefix is enough)")
    mp.add_argument("--json", action="store_true", help="the decision, statements and events as JSON")

    p = sub.add_parser("actions", parents=[common], help="open action items of board decisions; close one",
                       description="Action items of recorded board decisions, across meetings, with owners and "
                                   "age. `sabha actions done N` closes item N.")
    p.add_argument("action", nargs="*", metavar="done N", help="close action item N")
    p.add_argument("--all", action="store_true", help="include closed items")

    p = sub.add_parser("roundtable", parents=[common], help="run a roundtable debate from JSON (seed 004)",
                       description='Read {"prompt", "context", "learnings", "max_rounds"} JSON from FILE or stdin, '
                                   'run ARTIST/BUSINESS/TECH and the SUMMARIZER, print '
                                   '{"transcript", "summary"} JSON.')
    p.add_argument("file", nargs="?", help="input JSON file (default: stdin)")


def console_meeting_printer() -> Callable[[MeetingEvent], Awaitable[None]]:
    """Print progress of meetings started from the terminal (``/meeting`` in chat, the chair's tool)."""
    printer = _console_event_printer(False, final=True)

    async def show(event: MeetingEvent) -> None:
        if event.origin is not None and event.origin.channel == "console" and event.origin.chat_id == "console":
            await printer(event)

    return show


def _console_event_printer(quiet: bool, *, final: bool = False) -> Callable[[MeetingEvent], Awaitable[None]]:
    async def show(event: MeetingEvent) -> None:
        if final and event.kind == "ended":
            emit(event.data.get("minutes") or f"== Meeting ended: {event.data.get('stop_reason')}")
            return
        if quiet:
            return
        label = f"{event.emoji} {event.name}" if event.name else "Sabha"
        if event.kind == "started":
            emit(f"== Board meeting {event.meeting_id}: {event.topic}")
            for warning in event.data.get("warnings") or []:
                emit(f"   note: {warning}")
        elif event.kind == "framed":
            emit(f"{label} (agenda): {event.text}")
        elif event.kind == "agent_spoke":
            model = f" ({event.data['model']})" if event.data.get("models_differ") and event.data.get("model") else ""
            emit(f"[round {event.round}] {label}{model}: {event.text}")
        elif event.kind == "absent":
            emit(f"[round {event.round}] {label} is absent: {event.text}")
        elif event.kind in ("disagreement", "consensus"):
            emit(f"[round {event.round}] {label} {event.text}")
        elif (event.kind == "round_done" and "unanimous" in event.text) or event.kind == "peer_review":
            emit(f"== {event.text}")
        elif event.kind == "objection":
            emit(f"[final objection] {label}: {event.text}")
        elif event.kind == "ended":
            emit(f"== Meeting ended: {event.data.get('stop_reason')}")
    return show


async def cmd_meeting(board: Board, args: argparse.Namespace) -> int:
    """Hold a meeting to the end in the terminal."""
    from board.envelope import Envelope

    envelope = Envelope(channel="console", chat_id="cli-meeting", text="", sender="owner", sender_name="owner",
                        is_owner=True)
    try:
        run = board.room.prepare(" ".join(args.topic), envelope=envelope, roster=args.roster,
                                 extra_subscribers=[_console_event_printer(args.quiet)])
    except ValueError as exc:  # an unknown roster, a blank topic, a roster without specialists
        sys.stderr.write(f"sabha: {exc}\n")
        return 2
    result = await run.run()
    emit()
    emit(result.minutes)
    return 0 if result.stop_reason.value in ("completed", "converged") else 1


async def cmd_meetings(board: Board, args: argparse.Namespace) -> int:
    """meetings list | show ID."""
    store = board.room.store
    if args.meetings_command == "list":
        rows = await store.list(args.limit)
        if not rows:
            emit('no meetings yet: try sabha meeting "should we expand to Europe?"')
            return 0
        for listed in rows:
            reason = listed.stop_reason or listed.status
            emit(f"{listed.id}  {listed.started_at}  {reason:<10} ${listed.cost_usd:.4f}  {listed.roster:<10} "
                 f"{listed.topic}")
        return 0
    row = await store.get(args.id)
    if row is None:
        sys.stderr.write(f"sabha: no meeting {args.id!r}; see `sabha meetings list`\n")
        return 2
    if args.json:
        details = await store.details(row.id)
        emit(json.dumps({"id": row.id, "topic": row.topic, "roster": row.roster, "chair": row.chair,
                           "status": row.status, "stop_reason": row.stop_reason, "error": row.error,
                           "agenda": row.agenda, "started_at": row.started_at, "ended_at": row.ended_at,
                           "cost_usd": row.cost_usd, "decision": row.decision, **details},
                          indent=2, ensure_ascii=False))
        return 0
    emit(row.minutes or f"Meeting {row.id} on {row.topic!r} has no minutes yet (status {row.status}).")
    return 0


async def cmd_actions(board: Board, args: argparse.Namespace) -> int:
    """actions [--all] | actions done N."""
    from board.room.record import format_actions

    store = board.room.store
    words = list(args.action or [])
    if words:
        if len(words) != 2 or words[0] != "done" or not words[1].lstrip("#").isdigit():
            sys.stderr.write("sabha: usage: sabha actions [--all] | sabha actions done N\n")
            return 2
        row = await store.close_action(int(words[1].lstrip("#")), by="cli")
        if row is None:
            sys.stderr.write(f"sabha: no open action item #{words[1].lstrip('#')}; see `sabha actions`\n")
            return 2
        emit(f"Done: #{row.id} {row.task} (owner: {row.owner}), from {row.meeting_id}.")
        return 0
    emit(format_actions(await store.actions(include_done=args.all, limit=500)))
    return 0


async def cmd_roundtable(board: Board, args: argparse.Namespace) -> int:
    """Roundtable JSON in, JSON out."""
    try:
        if args.file:
            text = await asyncio.to_thread(Path(args.file).read_text, encoding="utf-8")
        else:
            text = sys.stdin.read()
        request = parse_input(text)
    except RoundtableInputError as exc:
        emit(json.dumps({"error": str(exc), "details": exc.details}, ensure_ascii=False))
        return 2
    except (OSError, UnicodeDecodeError) as exc:
        emit(json.dumps({"error": f"cannot read {args.file}", "details": [str(exc)]}, ensure_ascii=False))
        return 2
    output = await run_roundtable(board.room, request)
    emit(json.dumps(output, indent=2, ensure_ascii=False))
    return 0 if output.get("stop_reason") in ("completed", "converged") and not output.get("error") else 1
