"""``sabha meeting``, ``sabha meetings list|show``, ``sabha actions`` and ``sabha roundtable``.

``meeting`` says what the meeting is expected to cost and take (stderr; above
``board.meetings.confirm_over_usd`` it starts only with ``--yes`` or a "y" typed at the terminal), holds it
in the terminal and prints each statement as it is made, then the minutes (``--quiet``: only the
minutes); typed at (stdin a terminal), lines typed while it runs speak to it (:mod:`bot.cli.meeting_seat`: a
contribution, or ``/wrap`` ...); on a terminal the minutes are rendered and leave out the statements just printed;
with stdout a file or a pipe
(``sabha meeting ... > minutes.md``) stdout gets only the minutes, as Markdown, and the
statements go to stderr.
``roundtable`` takes a plain question, or reads the roundtable's JSON (prompt, context,
learnings, max_rounds) from a file or stdin, and prints the seed's
``{"transcript", "summary"}`` JSON; bad input prints a JSON error object and exits with code 2. Listing
meetings and action items never creates a state database.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.cli.common import emit
from bot.cli.meeting_seat import TerminalSeat, seat_wanted
from bot.cli.meeting_view import console_event_printer, live_to_stderr, minutes_text
from bot.cli.screen import on_terminal
from bot.cli.where import board_command

if TYPE_CHECKING:
    from board.app import Parts
    from board.envelope import Envelope
    from board.room.meeting import MeetingResult, MeetingRun
    from board.room.roundtable import RoundtableInput

__all__ = ["add_parsers", "cmd_actions", "cmd_meeting", "cmd_meetings", "cmd_roundtable"]

NO_MEETINGS = 'no meetings yet: try sabha meeting "should we expand to Europe?"'


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add the meeting commands to the ``sabha`` parser."""
    p = sub.add_parser("meeting", parents=[common], help="hold a board meeting on a topic",
                       description="Hold a board meeting: the chair frames it, specialists debate in rounds, "
                                   "the chair records a decision. Prints statements as they come, then the minutes. "
                                   "On a terminal, type while it runs: a line is quoted to every member in the next "
                                   "round (@role asks one member); /wrap ends after the round in progress, /pause, "
                                   "/resume, /extend (one more round), /cancel.")
    p.add_argument("topic", nargs="+", help="what the board should decide")
    p.add_argument("--roster", help="board, sabha, roundtable or a roster from config (default: board.roster)")
    p.add_argument("--quiet", action="store_true", help="print only the minutes")
    p.add_argument("--yes", action="store_true",
                   help="start even when the estimate is above board.meetings.confirm_over_usd (else a terminal "
                        "asks, and a script stops with the estimate)")
    p.add_argument("--file", action="append", metavar="PATH",
                   help="put a file (a document, a voice note) on the agenda as evidence: the members are "
                        "given what it says and cite it, the minutes list it; repeat for several")
    p.set_defaults(handler=board_command(cmd_meeting, writes=True))

    p = sub.add_parser("meetings", parents=[common], help="list past meetings or show one",
                       description="Past board meetings from the state database.")
    msub = p.add_subparsers(dest="meetings_command", metavar="ACTION", required=True)
    mp = msub.add_parser("list", parents=[common], help="recent meetings")
    mp.add_argument("--limit", type=int, default=20, metavar="N")
    mp = msub.add_parser("show", parents=[common], help="the minutes of one meeting")
    mp.add_argument("id", help="meeting id (a unique prefix is enough)")
    mp.add_argument("--json", action="store_true", help="the decision, statements and events as JSON")
    p.set_defaults(handler=board_command(cmd_meetings, writes=False, empty=NO_MEETINGS))

    p = sub.add_parser("actions", parents=[common],
                       help="action items of board decisions, due dates, overdue first; close, date or snooze one",
                       description="Action items of recorded board decisions, across meetings, who owes each, due "
                                   "dates (the overdue ones first, with how late) and age. `sabha actions done N` "
                                   "closes item N (and cancels its reminder); `sabha actions due N WHEN` sets when it "
                                   "is due (friday, +2h, 2026-12-15, in two weeks; in board.timezone) and moves its "
                                   "reminder; "
                                   "`sabha actions snooze N [LENGTH]` reminds again after LENGTH (default 1d).")
    p.add_argument("action", nargs="*", metavar="done N | due N WHEN | snooze N [LENGTH]",
                   help="close, date or snooze action item N")
    p.add_argument("--all", action="store_true", help="include closed items")
    p.set_defaults(handler=_actions_handler)

    p = sub.add_parser("roundtable", parents=[common],
                       help="a roundtable debate (artist, business, tech) on a question or from JSON",
                       description='Run ARTIST/BUSINESS/TECH for max_rounds rounds (default 3), each in turn seeing '
                                   'the whole debate so far, then the SUMMARIZER; print {"transcript", "summary"} '
                                   'JSON. Give a question (sabha roundtable "How can we reach AI startup CTOs?"), '
                                   'a JSON file, or {"prompt", "context", "learnings", "max_rounds"} JSON on stdin.')
    p.add_argument("question", nargs="*", metavar="QUESTION|FILE",
                   help="the question to debate, or an input JSON file (default: JSON on stdin)")
    p.add_argument("--rounds", type=int, metavar="N", help="rounds to run (1-5; default: max_rounds or 3)")
    p.add_argument("--parallel", action="store_true",
                   help="debaters of a round speak at once (each sees the earlier rounds only)")
    p.add_argument("--early-stop", action="store_true",
                   help="end the debate before max_rounds when the debaters converge")
    p.set_defaults(handler=board_command(cmd_roundtable, writes=True))


async def _actions_handler(args: argparse.Namespace) -> int:
    """``actions`` reads; ``actions done N`` writes (and needs a recorded decision anyway)."""
    writes = bool(args.action)
    handler = board_command(cmd_actions, writes=writes, empty="no action items yet: they come from board meetings")
    return await handler(args)


async def cmd_meeting(parts: Parts, args: argparse.Namespace) -> int:
    """Hold a meeting to the end in the terminal; typed at, the owner sits at the table
    (:mod:`bot.cli.meeting_seat`)."""
    from board.envelope import Envelope

    envelope = Envelope(channel="console", chat_id="cli-meeting", text="", sender="owner", sender_name="owner",
                        is_owner=True)
    live = on_terminal()  # else the statements go to stderr: `sabha meeting ... > minutes.md` gets the minutes only
    seated = seat_wanted()
    printer = console_event_printer(args.quiet, seat=seated) if live \
        else console_event_printer(args.quiet, say=live_to_stderr)
    try:
        run = parts.room.prepare(" ".join(args.topic), envelope=envelope, roster=args.roster,
                                 extra_subscribers=[printer])
    except ValueError as exc:  # an unknown roster, a blank topic, a roster without specialists
        sys.stderr.write(f"sabha: {exc}\n")
        return 2
    if not await _cost_agreed(parts, args):
        return 2
    if args.file:
        await _with_evidence(parts, run, envelope, args.file)
    result = await _held(parts, run, seated)
    if live and not args.quiet:
        emit()  # a blank line between the statements and the minutes
    emit(minutes_text(result.minutes, after_live=live and not args.quiet))
    return 0 if result.stop_reason.value in ("completed", "converged", "wrapped") else 1


async def _held(parts: Parts, run: MeetingRun, seated: bool) -> MeetingResult:
    """Run the meeting to its end; ``seated``: reading the owner's lines meanwhile."""
    import asyncio
    import contextlib

    if not seated:
        return await parts.room.run_held(run)
    reader = asyncio.create_task(TerminalSeat(parts.room, run.id).read(), name="the owner's seat")
    try:
        return await parts.room.run_held(run)
    finally:
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader


async def _cost_agreed(parts: Parts, args: argparse.Namespace) -> bool:
    """Say what the meeting is expected to cost and take (stderr); above ``board.meetings.confirm_over_usd`` it
    starts only with ``--yes`` or a "y" typed at the terminal: nothing is spent otherwise."""
    import shutil
    import textwrap

    from bot.cli.common import note

    estimate = await parts.room.estimate(roster=args.roster)
    width = max(40, shutil.get_terminal_size().columns - len("sabha: "))  # each line fits the terminal
    for line in estimate.text().splitlines():
        for piece in textwrap.wrap(line, width, subsequent_indent="  ") or [""]:
            note(piece)
    threshold = parts.room.meeting_settings.confirm_over_usd
    if args.yes or not estimate.needs_start(threshold):
        return True
    ask = f"the estimate is above board.meetings.confirm_over_usd (${threshold:g})"
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        note(f"{ask}: nothing was spent; run it again with --yes to start it")
        return False
    sys.stderr.write(f"sabha: {ask}. Start the meeting? [y/N] ")
    sys.stderr.flush()
    if sys.stdin.readline().strip().lower() in ("y", "yes"):
        return True
    note("not started; nothing was spent")
    return False


async def _with_evidence(parts: Parts, run: MeetingRun, envelope: Envelope, files: list[str]) -> None:
    """Put the files of ``--file`` on ``run``'s agenda as evidence: each checked (a path that cannot be
    sent is a :class:`~bot.cli.common.UserError` before anyone speaks), read as a channel's file is."""
    from dataclasses import replace

    from board.answer import read_media
    from bot.cli.attach import LocalFiles, describe, local_attachment
    from bot.cli.common import note

    attachments = tuple(local_attachment(path, parts.media.settings.limit_for) for path in files)
    for attachment in attachments:
        note(f"attached: {describe(attachment)}")
    read = await read_media(replace(envelope, attachments=attachments), parts.door, LocalFiles())
    run.m = replace(run.m, evidence=await parts.room.evidence(read))


async def cmd_meetings(parts: Parts, args: argparse.Namespace) -> int:
    """meetings list | show ID."""
    store = parts.room.store
    if args.meetings_command == "list":
        from bot.cli.table import local_time, table

        rows = await store.list(args.limit)
        if not rows:
            emit(NO_MEETINGS)
            return 0
        from board.decisions.ratify import verdicts

        states = await verdicts(store.db, [m.id for m in rows])  # each decision's: proposed, ratified, vetoed ...
        body = [[m.id, local_time(m.started_at), local_time(m.ended_at) if m.ended_at else "-",
                 m.stop_reason or m.status, states[m.id].value if m.id in states else "-", f"${m.cost_usd:.4f}",
                 m.roster, m.topic] for m in rows]
        for line in table(["ID", "STARTED", "ENDED", "OUTCOME", "DECISION", "COST", "ROSTER", "TOPIC"], body,
                          right=(5,)):
            emit(line)
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
    if row.minutes:
        emit(minutes_text(row.minutes, after_live=False))  # rendered on a terminal, Markdown when piped
    else:
        emit(f"Meeting {row.id} on {row.topic!r} has no minutes yet (status {row.status}).")
    return 0


async def cmd_actions(parts: Parts, args: argparse.Namespace) -> int:
    """actions [--all] | actions done N | actions due N WHEN | actions snooze N [LENGTH]."""
    from board.decisions.reminders import ActionProblem
    from board.room.record import format_actions

    words = list(args.action or [])
    if not words:
        emit(format_actions(await parts.room.store.actions(include_done=args.all, limit=500),
                            now=parts.clock.now(),
                            close="sabha actions done <n>", zone=parts.reminders.zone,
                            due="sabha actions due <n> <when>", who=parts.reminders.who))
        return 0
    verb, number = words[0], words[1].lstrip("#") if len(words) > 1 else ""
    rest = " ".join(words[2:])
    if verb not in ("done", "due", "snooze") or not number.isdigit() or (verb == "done" and rest) \
            or (verb == "due" and not rest):
        sys.stderr.write("sabha: usage: sabha actions [--all] | sabha actions done N | sabha actions due N WHEN "
                         "| sabha actions snooze N [LENGTH]\n")
        return 2
    reminders = parts.reminders
    try:
        if verb == "done":
            row = await reminders.done(int(number), by="cli")
            emit(f"Done: #{row.id} {row.task} (owed by {reminders.who(row.owner)}), from {row.meeting_id}.")
        elif verb == "due":
            changed = await reminders.set_due(int(number), rest)
            where = reminders.goes_to(changed.row) or f"{changed.row.channel} chat {changed.row.chat_id}"
            emit(f"#{changed.row.id} {changed.row.task} (owed by {reminders.who(changed.row.owner)}) is now due "
                 f"{changed.when.said}; "
                 f"its reminder goes to {where} then.")
        else:
            changed = await reminders.snooze(int(number), rest)
            emit(f"Snoozed #{changed.row.id} {changed.row.task}: reminded again {changed.when.said}.")
    except ActionProblem as problem:
        sys.stderr.write(f"sabha: {str(problem).replace('/actions', '`sabha actions`')}\n")
        return 2
    return 0


async def cmd_roundtable(parts: Parts, args: argparse.Namespace) -> int:
    """Roundtable JSON (or a plain question) in, the seed's ``{"transcript", "summary"}`` JSON out."""
    from board.room.roundtable import RoundtableInputError, run_roundtable

    try:
        request = await _roundtable_input(args)
    except RoundtableInputError as exc:
        emit(json.dumps({"error": str(exc), "details": exc.details}, ensure_ascii=False))
        return 2
    output = await run_roundtable(parts.room, request)
    emit(json.dumps({"transcript": output["transcript"], "summary": output["summary"]}, indent=2,
                    ensure_ascii=False))
    for note in output.get("notes", []):
        sys.stderr.write(f"sabha: roundtable: note: {note}\n")
    if output.get("error"):
        sys.stderr.write(f"sabha: roundtable: {output['error']}\n")
    return 0 if output.get("stop_reason") in ("completed", "converged") and output["summary"] else 1


async def _roundtable_input(args: argparse.Namespace) -> RoundtableInput:
    """The request from a question, a JSON file or JSON on stdin, with the command line's options."""
    import asyncio

    from board.room.roundtable import RoundtableInputError, parse_input

    words: list[str] = list(args.question or [])
    path = Path(words[0]) if len(words) == 1 else None
    if path is not None and (path.is_file() or (path.suffix == ".json" and " " not in words[0])):
        try:
            text = await asyncio.to_thread(path.read_text, encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise RoundtableInputError(f"cannot read {path}", [str(exc)]) from exc
    elif words:
        text = json.dumps({"prompt": " ".join(words)})
    else:
        text = sys.stdin.read()
    options = {"max_rounds": args.rounds, "parallel": args.parallel or None, "early_stop": args.early_stop or None}
    request = parse_input(text, {k: v for k, v in options.items() if v is not None})
    # seed 004's variables name the models (in Sabha's provider syntax) unless the input does
    models = {"model": request.model or os.environ.get("ROUNDTABLE_MODEL", "").strip() or None,
              "summarizer_model": request.summarizer_model or os.environ.get("SUMMARIZER_MODEL", "").strip() or None}
    return request.model_copy(update=models)
