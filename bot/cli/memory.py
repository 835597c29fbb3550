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
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from bot.cli.common import UserError, emit
from bot.cli.where import has_state, open_config

if TYPE_CHECKING:
    from board.memory.facts import Fact, FactStore

__all__ = ["add_parsers", "cmd_memory"]


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
    return 0


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
    """``sabha memory list|forget|edit``."""
    from board.memory.facts import FactStore
    from bot.app import open_state_db

    loaded = open_config(args, writes=False)
    if args.memory_command == "forget" and not args.all and not args.key:
        raise UserError("name the fact to forget (sabha memory forget USER KEY) or pass --all")
    if not has_state(loaded):
        emit(f"nothing remembered yet: no state database in {loaded.data_dir}")
        return 0 if args.memory_command == "list" else 1
    async with await open_state_db(loaded) as db:
        store = FactStore(db, loaded.config.memory.settings())
        if args.memory_command == "list":
            return await _list(store, args)
        if args.memory_command == "edit":
            return await _edit(store, args)
        count = await store.forget(args.user, None if args.all else " ".join(args.key), args.role)
        if not count:
            emit(f"nothing to forget: no {'facts' if args.all else repr(' '.join(args.key))} about {args.user}"
                 f"{f' in {args.role}' if args.role else ''} (see `sabha memory list --user {args.user}`)")
            return 1
        emit(f"forgot {count} fact(s) about {args.user}")
        return 0


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """``sabha memory``."""
    p = sub.add_parser("memory", parents=[common], help="facts the board remembers about users: list, forget, edit",
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
    p.set_defaults(handler=cmd_memory)
