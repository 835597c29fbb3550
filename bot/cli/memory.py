"""``sabha memory``: what the board remembers about its users, for the owner.

``memory list [--user USER] [--role ROLE]`` shows the facts agents saved with the
``remember`` tool (users as the ledger writes them: ``<channel>:<sender id>``, e.g.
``telegram:12345``, ``whatsapp:15550001111``, ``console:alice``). ``memory forget USER
KEY`` deletes one fact (from every role, or ``--role``), ``memory forget USER --all``
everything about that user. People manage their own facts in chat with ``/memory`` and
``/forget``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from bot.cli.common import UserError, emit
from bot.cli.where import has_state, open_config

__all__ = ["add_parsers", "cmd_memory"]


async def cmd_memory(args: argparse.Namespace) -> int:
    """``sabha memory list|forget``."""
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
            facts = await store.facts(user=args.user, role=args.role)
            if args.json:
                emit(json.dumps([{"user": f.user, "role": f.role, "key": f.key, "value": f.value,
                                  "updated_at": f.updated_at} for f in facts], indent=2, ensure_ascii=False))
                return 0
            if not facts:
                emit("nothing remembered" + (f" about {args.user}" if args.user else "") +
                     (f" by {args.role}" if args.role else ""))
                return 0
            from bot.cli.table import table

            for line in table(["USER", "ROLE", "KEY", "VALUE", "UPDATED"],
                              [[f.user, f.role, f.key, f.value, f.updated_at] for f in facts]):
                emit(line)
            sharing = "every role sees every fact about a user" if store.settings.cross_role \
                else "each role sees only what it was told (memory.cross_role: false)"
            emit(f"{len(facts)} fact(s); {sharing}")
            return 0
        count = await store.forget(args.user, None if args.all else " ".join(args.key), args.role)
        if not count:
            emit(f"nothing to forget: no {'facts' if args.all else repr(' '.join(args.key))} about {args.user}"
                 f"{f' in {args.role}' if args.role else ''} (see `sabha memory list --user {args.user}`)")
            return 1
        emit(f"forgot {count} fact(s) about {args.user}")
        return 0


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """``sabha memory``."""
    p = sub.add_parser("memory", parents=[common], help="facts the agents remember about users: list, forget",
                       description="Facts agents saved with the remember tool, per user (<channel>:<sender id>) "
                                   "and role. Users see and drop their own with /memory and /forget.")
    msub = p.add_subparsers(dest="memory_command", metavar="ACTION", required=True)
    mp = msub.add_parser("list", parents=[common], help="every fact (optionally of one user or role)")
    mp.add_argument("--user", help="e.g. telegram:12345, whatsapp:15550001111, console:alice")
    mp.add_argument("--role", help="only what this role remembers")
    mp.add_argument("--json", action="store_true", help="machine-readable output")
    mp = msub.add_parser("forget", parents=[common], help="delete a fact about a user (or --all of them)")
    mp.add_argument("user", help="the user, as `sabha memory list` shows it")
    mp.add_argument("key", nargs="*", help="the fact's key")
    mp.add_argument("--role", help="only in this role's memory (default: every role)")
    mp.add_argument("--all", action="store_true", help="every fact about the user")
    p.set_defaults(handler=cmd_memory)
