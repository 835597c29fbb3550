"""``sabha decisions list|show|ratify|veto|revisit``: board decisions and the owner's rulings, from the terminal.

A decision is proposed until the owner rules on it (:mod:`board.decisions.ratify`); whoever runs the
CLI on the board's folder is the owner. ``ratify`` / ``veto`` without an id rule on the latest
proposed decision; ``revisit`` needs a reason (it goes on the follow-up meeting's agenda) and
schedules the follow-up meeting (:mod:`board.room.followup`), which the daemon convenes where the
first meeting ran. Listing never creates a state database. Exit codes: 0 done (also "already
done": nothing changed, said so), 2 bad input (no such decision, a veto after a revisit ...).
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from typing import TYPE_CHECKING, Any

from bot.cli.common import emit
from bot.cli.where import board_command

if TYPE_CHECKING:
    from board.app import Parts
    from board.commands.registry import CommandRegistry
    from board.decisions.ratify import DecisionBook, DecisionRecord

__all__ = ["add_parsers", "cmd_decisions"]

NO_DECISIONS = 'no decisions yet: they come from board meetings (sabha meeting "should we expand to Europe?")'
ACTIONS = ("list", "show", "ratify", "veto", "revisit")


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``sabha decisions`` to the ``sabha`` parser."""
    p = sub.add_parser("decisions", parents=[common], help="board decisions: list, show, ratify, veto, revisit",
                       description="Board decisions and where they stand (proposed, ratified, vetoed, revisit). "
                                   "A decision's id is its meeting's id (a unique prefix is enough). A veto drops "
                                   "the decision's open action items; a revisit schedules a follow-up meeting with "
                                   "the reason on its agenda.")
    dsub = p.add_subparsers(dest="decisions_command", metavar="ACTION", required=True)
    lp = dsub.add_parser("list", parents=[common], help="recent decisions and their state")
    lp.add_argument("--state", choices=["proposed", "ratified", "vetoed", "revisit"], help="only these")
    lp.add_argument("--limit", type=int, default=20, metavar="N")
    lp.add_argument("--json", action="store_true", help="as JSON")
    sp = dsub.add_parser("show", parents=[common], help="one decision, its rulings (who, when, why)")
    sp.add_argument("id", help="the meeting id (a unique prefix is enough)")
    sp.add_argument("--json", action="store_true", help="as JSON")
    rp = dsub.add_parser("ratify", parents=[common], help="ratify a decision (default: the latest proposed)")
    rp.add_argument("id", nargs="?", help="the meeting id (default: the latest proposed decision)")
    vp = dsub.add_parser("veto", parents=[common], help="veto a decision; its open action items are dropped")
    vp.add_argument("id", nargs="?", help="the meeting id (default: the latest proposed decision)")
    vp.add_argument("reason", nargs="*", help="why (recorded)")
    xp = dsub.add_parser("revisit", parents=[common], help="send a decision back to a follow-up meeting")
    xp.add_argument("id", help="the meeting id")
    xp.add_argument("reason", nargs="+", help="why: it goes on the follow-up meeting's agenda")
    p.set_defaults(handler=_handler)


async def _handler(args: argparse.Namespace) -> int:
    writes = args.decisions_command in ("ratify", "veto", "revisit")
    return await board_command(cmd_decisions, writes=writes, empty=NO_DECISIONS)(args)


def _json(record: DecisionRecord) -> dict[str, Any]:
    from dataclasses import asdict

    return {**asdict(record), "verdict": record.verdict.value, "actions": list(record.actions)}


async def cmd_decisions(parts: Parts, args: argparse.Namespace) -> int:
    """decisions list | show ID | ratify [ID] | veto [ID] [REASON] | revisit ID REASON."""
    from board.decisions.ratify import Verdict

    book = parts.decisions
    action = args.decisions_command
    if action == "list":
        from bot.cli.table import local_time, table

        rows = await book.recent(verdict=Verdict(args.state) if args.state else None, limit=args.limit)
        if args.json:
            emit(json.dumps([_json(r) for r in rows], indent=2, ensure_ascii=False))
            return 0
        if not rows:
            emit(NO_DECISIONS if not args.state else f"no {args.state} decisions")
            return 0
        body = [[r.meeting_id, local_time(r.started_at), r.verdict.value,
                 (r.ruled_by_name or r.ruled_by or "-") if r.verdict is not Verdict.PROPOSED else "-",
                 r.topic, r.recommendation] for r in rows]
        for line in table(["ID", "MEETING", "STATE", "BY", "TOPIC", "RECOMMENDATION"], body):
            emit(line)
        return 0
    if action == "show":
        return await _show(book, args)
    return await _rule(book, parts.commands, args)


async def _show(book: DecisionBook, args: argparse.Namespace) -> int:
    from board.commands.decisions import describe
    from board.decisions.ratify import Outcome

    found = await book.find(args.id)
    if found.outcome is not Outcome.DONE or found.record is None:
        return _problem(found.outcome, args.id, found.candidates)
    rulings = await book.rulings(found.record.meeting_id)
    if args.json:
        emit(json.dumps({**_json(found.record), "rulings": rulings}, indent=2, ensure_ascii=False))
        return 0
    emit(describe(found.record))
    for i, task in enumerate(found.record.actions, start=1):
        emit(f"  action {i}: {task}")
    for ruling in rulings:
        emit(f"  {ruling['at']}: {ruling['previous']} -> {ruling['verdict']} by {ruling['by_name'] or ruling['by_id']} "
             f"via {ruling['via']}" + (f" ({ruling['reason']})" if ruling["reason"] else "")
             + (f"; dropped action item(s) {', '.join(f'#{n}' for n in ruling['dropped'])}" if ruling["dropped"]
                else ""))
    return 0


def _problem(outcome: str, ref: str, candidates: tuple[str, ...] = ()) -> int:
    if outcome == "ambiguous":
        sys.stderr.write(f"sabha: {ref!r} names several meetings ({', '.join(candidates)}); give more of the id\n")
    elif outcome == "no_decision":
        sys.stderr.write(f"sabha: meeting {ref!r} reached no decision; there is nothing to rule on\n")
    else:
        sys.stderr.write(f"sabha: no decision {ref!r}; see `sabha decisions list`\n")
    return 2


async def _rule(book: DecisionBook, commands: CommandRegistry, args: argparse.Namespace) -> int:
    """ratify / veto / revisit through the same words as the chat commands, as the owner."""
    from board.envelope import Envelope
    from board.routing.router import Route

    command = args.decisions_command
    ref = args.id if args.id and args.id.lower().startswith("m-") else None
    reason = ([args.id] if args.id and ref is None else []) + list(getattr(args, "reason", None) or [])
    if ref is None:  # `sabha decisions veto too risky`: the latest proposed decision, all words the reason
        if command == "revisit":
            sys.stderr.write("sabha: say which decision to revisit: sabha decisions revisit <id> <reason>\n")
            return 2
        latest = await book.latest(None)
        if latest is None:
            sys.stderr.write("sabha: no proposed decision; see `sabha decisions list`\n")
            return 2
        ref = latest.meeting_id
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no user name (a container without one)
        user = "owner"
    text = " ".join([ref, *reason])
    envelope = Envelope(channel="cli", chat_id="cli", text=f"/{command} {text}", sender=user,
                        sender_name=f"{user} (terminal)", is_owner=True)
    reply = await commands.run_command(envelope, Route(kind="command", role="general", text=text,
                                                    session_key="cli", command=command))
    emit(reply.text)
    return 2 if any(marker in reply.text for marker in _REFUSED) else 0


#: What the command's answer says when nothing could be done (exit code 2).
_REFUSED = ("There is no meeting", "names several meetings", "reached no decision", "cannot be", "No proposed decision")
