"""``sabha people``: the owner lists and links people's accounts across channels.

``people`` (or ``people list``) shows every linked person (``person:<n>``) and their identities
(``<channel>:<sender id>``, e.g. ``telegram:12345``, ``whatsapp:15550001111``, ``console:owner``);
``people link A B`` makes two identities one person (one memory, one set of budgets), as ``/link``
does in chat but with no code; ``people unlink A`` takes one identity out again (the person keeps
its memory). See :mod:`board.people`.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from bot.cli.common import UserError, emit
from bot.cli.where import has_state, open_config

__all__ = ["add_parsers", "cmd_people"]


def _identity(text: str) -> str:
    channel, _, sender = text.partition(":")
    if not channel.strip() or not sender.strip() or " " in text.strip():
        raise UserError(f"{text!r} is not an identity: write CHANNEL:ID, e.g. telegram:12345 or "
                        "whatsapp:15550001111 (`sabha memory list` and `sabha cost --by sender` show them)")
    return text.strip()


async def cmd_people(args: argparse.Namespace) -> int:
    """``sabha people [list|link|unlink]``."""
    from board.memory.facts import FactStore
    from board.people import LinkOutcome, People
    from bot.app import open_state_db

    action = args.people_command or "list"
    loaded = open_config(args, writes=action != "list")
    if action == "list" and not has_state(loaded):
        emit(f"no linked people: no state database in {loaded.data_dir}")
        return 0
    async with await open_state_db(loaded) as db:
        people = People(db, loaded.config.people.settings(), facts=FactStore(db, loaded.config.memory.settings()))
        if action == "link":
            a, b = _identity(args.a), _identity(args.b)
            if a == b:
                raise UserError("name two different identities")
            result = await people.link(a, b)
            if result.outcome is LinkOutcome.LINKED_ELSEWHERE:
                raise UserError(f"{a} and {b} are both linked to other accounts already; "
                                "`sabha people unlink` one of them first")
            word = "already linked" if result.outcome is LinkOutcome.ALREADY else "linked"
            emit(f"{word}: {a} and {b} are person:{result.person} (one memory, one set of budgets)")
            return 0
        if action == "unlink":
            who = _identity(args.a)
            done = await people.unlink(who)
            if done is None:
                emit(f"{who} is not linked to another identity (see `sabha people`)")
                return 1
            emit(f"unlinked: {who} is on its own again; person:{done[0]} keeps its memory ({', '.join(done[1])})")
            return 0
        return _list(await people.persons(), as_json=args.json)


def _list(persons: list[Any], *, as_json: bool) -> int:
    if as_json:
        emit(json.dumps([{"person": p.key, "owner": p.owner, "created_at": p.created_at,
                          "identities": list(p.identities)} for p in persons], indent=2))
        return 0
    if not persons:
        emit("no linked people (each account is a person of its own; /link in chat or `sabha people link`)")
        return 0
    from bot.cli.table import table

    for line in table(["PERSON", "IDENTITIES", "SINCE"],
                      [[p.key + (" (owner)" if p.owner else ""), ", ".join(p.identities), p.created_at]
                       for p in persons]):
        emit(line)
    return 0


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """``sabha people``."""
    p = sub.add_parser("people", parents=[common], help="one person across channels: list, link, unlink",
                       description="Accounts linked into one person (one memory, one set of budgets). People link "
                                   "their own with /link in chat; the owner links any two here.")
    psub = p.add_subparsers(dest="people_command", metavar="ACTION")
    lp = psub.add_parser("list", parents=[common], help="every linked person and their identities")
    lp.add_argument("--json", action="store_true", help="machine-readable output")
    lp = psub.add_parser("link", parents=[common], help="make two identities one person")
    lp.add_argument("a", metavar="CHANNEL:ID", help="e.g. telegram:12345")
    lp.add_argument("b", metavar="CHANNEL:ID", help="e.g. whatsapp:15550001111")
    lp = psub.add_parser("unlink", parents=[common], help="take one identity out of its person")
    lp.add_argument("a", metavar="CHANNEL:ID", help="the identity, as `sabha people` shows it")
    p.set_defaults(handler=cmd_people, json=False)
