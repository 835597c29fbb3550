"""``sabha memory``: what the board remembers about its users, for the owner.

``memory list [--user USER] [--role ROLE] [--sources] [--json]`` shows the facts: those the
board heard a person state (role ``*``: every advisor sees them; memory.auto_extract) and
those agents saved with the ``remember`` tool (users as the ledger writes them:
``<channel>:<sender id>``, e.g. ``telegram:12345``, ``whatsapp:15550001111``,
``console:alice``); ``--sources`` adds where each came from (the message and transcript
entry). ``memory forget USER KEY`` deletes one fact (from every role, or ``--role``),
``memory forget USER --all`` everything about that user. ``memory edit USER KEY VALUE``
gives a fact a new value (secrets are refused as in chat). People manage their own facts
in chat with ``/memory``, ``/forget``, "what do you remember about me" and "forget that".

Memory that tidies itself (:mod:`board.memory.consolidation`): ``memory changes [--person USER] [--since WHEN]
[--all]`` prints each consolidation run's diff (merged, rewritten, expired: before -> after; the profile),
newest first; ``memory undo ID`` restores exactly the facts before that change (what the person changed or
forgot since stays as it is now, and is named); ``memory consolidate USER`` runs one consolidation of that
person now, with the configured cheap model, and prints its diff. Exit codes: 0 done, 1 nothing found, 2 bad
input (an unknown change, one undone already, a --since that cannot be read).
"""

from __future__ import annotations

import argparse
import json
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from bot.cli.common import UserError, emit
from bot.cli.where import has_state, open_config

if TYPE_CHECKING:
    from board.app import Board
    from board.memory.consolidation.changes import ChangeStore
    from board.memory.facts import Fact, FactStore
    from bot.config import LoadedConfig

__all__ = ["add_parsers", "cmd_memory", "since_stamp"]


def _source(fact: Fact) -> str:
    where = fact.provenance
    parts = [where.source.value]
    if where.message:
        parts.append(f"message {where.message}")
    if where.entry:
        parts.append(f"entry {where.entry}")
    if where.session:
        parts.append(f"in {where.session}")
    return ", ".join(parts)


def _as_json(fact: Fact) -> dict[str, Any]:
    where = fact.provenance
    return {"user": fact.user, "role": fact.role, "key": fact.key, "value": fact.value,
            "updated_at": fact.updated_at, "source": where.source.value, "source_message": where.message,
            "source_entry": where.entry, "source_session": where.session}


async def _list(store: FactStore, args: argparse.Namespace) -> int:
    facts = await store.facts(user=args.user, role=args.role)
    if args.json:
        emit(json.dumps([_as_json(f) for f in facts], indent=2, ensure_ascii=False))
        return 0
    if not facts:
        emit("nothing remembered" + (f" about {args.user}" if args.user else "") +
             (f" by {args.role}" if args.role else ""))
        return 0
    from bot.cli.table import table

    head = ["USER", "ROLE", "KEY", "VALUE", "UPDATED", *(["FROM"] if args.sources else [])]
    for line in table(head, [[f.user, f.role, f.key, f.value, f.updated_at, *([_source(f)] if args.sources else [])]
                             for f in facts]):
        emit(line)
    sharing = "every role sees every fact about a user" if store.settings.cross_role \
        else "each role sees only what it was told (memory.cross_role: false)"
    emit(f"{len(facts)} fact(s); {sharing}; role * is what the board heard the person say (every role sees it)")
    if args.user:
        from board.memory.consolidation.changes import ChangeStore

        profile = await ChangeStore(store.db).profile(args.user)
        if profile:
            emit(f"profile (kept by consolidation): {json.dumps(profile, ensure_ascii=False)}")
    return 0


_SPAN = re.compile(r"^(\d+)\s*([mhdw])$")
_UNIT = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def since_stamp(text: str, now: datetime | None = None) -> str:
    """``--since``: ``7d`` / ``12h`` / ``30m`` / ``2w`` ago, or an ISO date or moment (UTC unless it says), as the
    stamp changes are recorded with; :class:`UserError` when it cannot be read."""
    now = now or datetime.now(UTC)
    span = _SPAN.match(text.strip().lower())
    if span is not None:
        moment = now - timedelta(**{_UNIT[span.group(2)]: int(span.group(1))})
    else:
        try:
            moment = datetime.fromisoformat(text.strip())
        except ValueError:
            raise UserError(f"--since {text!r} cannot be read: write 7d, 12h, 30m, 2w, or a date such as "
                            "2026-11-01") from None
        moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


async def _changes(changes: ChangeStore, args: argparse.Namespace) -> int:
    found = await changes.changes(args.person, since_stamp(args.since) if args.since else None,
                                  limit=args.limit, empty=args.all)
    if args.json:
        emit(json.dumps([{"id": c.id, "user": c.user, "created_at": c.created_at, "model": c.model,
                          "undone_at": c.undone_at, "undo_note": c.undo_note, "profile_before": c.profile_before,
                          "profile_after": c.profile_after,
                          "steps": [{"kind": s.kind.value, "before": list(s.before), "after": s.after,
                                     "reason": s.reason} for s in c.steps]} for c in found],
                        indent=2, ensure_ascii=False))
        return 0
    if not found:
        emit("no memory changes" + (f" for {args.person}" if args.person else "") +
             (f" since {args.since}" if args.since else "") +
             " (consolidation runs once a day after new facts; sabha memory consolidate USER runs one now)")
        return 0
    for change in found:
        for line in change.lines():
            emit(line)
    return 0


async def _undo(changes: ChangeStore, args: argparse.Namespace) -> int:
    from board.memory.consolidation.changes import ChangeProblem

    if not str(args.change).isdigit():
        raise UserError(f"{args.change!r} is no change id: give the number sabha memory changes shows "
                        "(e.g. sabha memory undo 12)")
    try:
        undone = await changes.undo(int(args.change))
    except ChangeProblem as exc:
        raise UserError(str(exc)) from None
    emit(f"undid memory change {args.change} of {undone.change.user}: {undone.restored} fact(s) restored as they "
         "were before it")
    for kept in undone.kept:
        emit(f"  left as it is now: {kept}")
    return 0


async def _consolidate(loaded: LoadedConfig, args: argparse.Namespace) -> int:
    from bot.cli.where import with_board

    async def body(board: Board) -> int:
        consolidator = board.parts.consolidator
        if consolidator is None:
            raise UserError("memory is off (memory.enabled: false): there is nothing to consolidate")
        outcome = await consolidator.run_now(args.user)
        if outcome.change is None or outcome.change.empty:
            emit(f"nothing changed for {args.user}: {outcome.note}")
            return 0
        for line in outcome.change.lines():
            emit(line)
        return 0

    return await with_board(loaded, body)


async def _edit(store: FactStore, args: argparse.Namespace) -> int:
    from board.memory.facts import FactError

    try:
        count = await store.edit(args.user, args.key, args.value, args.role)
    except FactError as exc:
        raise UserError(f"not saved: {exc}") from None
    if not count:
        emit(f"nothing to edit: no {args.key!r} about {args.user}{f' in {args.role}' if args.role else ''} "
             f"(see `sabha memory list --user {args.user}`)")
        return 1
    emit(f"edited {count} fact(s) about {args.user}")
    return 0


async def cmd_memory(args: argparse.Namespace) -> int:
    """``sabha memory list|forget|edit|changes|undo|consolidate``."""
    from board.memory.consolidation.changes import ChangeStore
    from board.memory.facts import FactStore
    from bot.app import open_state_db

    loaded = open_config(args, writes=args.memory_command == "consolidate")
    if args.memory_command == "forget" and not args.all and not args.key:
        raise UserError("name the fact to forget (sabha memory forget USER KEY) or pass --all")
    if args.memory_command == "consolidate":
        return await _consolidate(loaded, args)
    if not has_state(loaded):
        emit(f"nothing remembered yet: no state database in {loaded.data_dir}")
        return 0 if args.memory_command in ("list", "changes") else 1
    async with await open_state_db(loaded) as db:
        store = FactStore(db, loaded.config.memory.settings())
        if args.memory_command == "list":
            return await _list(store, args)
        if args.memory_command == "edit":
            return await _edit(store, args)
        if args.memory_command == "changes":
            return await _changes(ChangeStore(db), args)
        if args.memory_command == "undo":
            return await _undo(ChangeStore(db), args)
        count = await store.forget(args.user, None if args.all else " ".join(args.key), args.role)
        if not count:
            emit(f"nothing to forget: no {'facts' if args.all else repr(' '.join(args.key))} about {args.user}"
                 f"{f' in {args.role}' if args.role else ''} (see `sabha memory list --user {args.user}`)")
            return 1
        emit(f"forgot {count} fact(s) about {args.user}")
        return 0


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """``sabha memory``."""
    p = sub.add_parser("memory", parents=[common],
                       help="facts the board remembers about users: list, forget, edit, changes, undo",
                       description="Facts the board heard people state (role *) and facts agents saved with the "
                                   "remember tool, per user (<channel>:<sender id>) and role. Users see and drop "
                                   "their own with /memory, /forget, 'what do you remember about me' and "
                                   "'forget that'.")
    msub = p.add_subparsers(dest="memory_command", metavar="ACTION", required=True)
    mp = msub.add_parser("list", parents=[common], help="every fact (optionally of one user or role)")
    mp.add_argument("--user", help="e.g. telegram:12345, whatsapp:15550001111, console:alice")
    mp.add_argument("--role", help="only what this role remembers (* : what the board heard the person say)")
    mp.add_argument("--sources", action="store_true", help="also where each fact came from (message, entry)")
    mp.add_argument("--json", action="store_true", help="machine-readable output")
    mp = msub.add_parser("forget", parents=[common], help="delete a fact about a user (or --all of them)")
    mp.add_argument("user", help="the user, as `sabha memory list` shows it")
    mp.add_argument("key", nargs="*", help="the fact's key")
    mp.add_argument("--role", help="only in this role's memory (default: every role)")
    mp.add_argument("--all", action="store_true", help="every fact about the user")
    mp = msub.add_parser("edit", parents=[common], help="give a fact about a user a new value")
    mp.add_argument("user", help="the user, as `sabha memory list` shows it")
    mp.add_argument("key", help="the fact's key (quote a key of several words)")
    mp.add_argument("value", help="its new value, one line (secrets are refused)")
    mp.add_argument("--role", help="only in this role's memory (default: wherever the key is kept)")
    mp = msub.add_parser("changes", parents=[common], help="what consolidation changed: each run's diff",
                         description="Each consolidation run's change, newest first: facts merged, rewritten and "
                                     "expired (before -> after) and the profile; undo one with sabha memory undo ID.")
    mp.add_argument("--person", help="only this person's (a user as `sabha memory list` shows it)")
    mp.add_argument("--since", help="only changes since then: 7d, 12h, 30m, 2w, or a date such as 2026-11-01")
    mp.add_argument("--limit", type=int, default=20, help="at most this many changes (default 20)")
    mp.add_argument("--all", action="store_true", help="also runs that changed nothing")
    mp.add_argument("--json", action="store_true", help="machine-readable output")
    mp = msub.add_parser("undo", parents=[common], help="restore the facts as they were before a change",
                         description="Restore exactly the facts before consolidation change ID (sabha memory "
                                     "changes lists them). What the person or the owner changed or forgot since "
                                     "stays as it is now, and is named.")
    mp.add_argument("change", metavar="ID", help="the change's id, as sabha memory changes shows it")
    mp = msub.add_parser("consolidate", parents=[common], help="tidy one person's facts now and print the diff",
                         description="Run one consolidation of USER's facts now with the configured cheap model "
                                     "(llm.cheap_model), within memory.consolidation.daily_usd, and print what "
                                     "changed. It otherwise runs on its own once a day after new facts were heard.")
    mp.add_argument("user", help="the user, as `sabha memory list` shows it")
    p.set_defaults(handler=cmd_memory)
