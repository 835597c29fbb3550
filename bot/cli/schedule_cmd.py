"""``sabha schedule add|list|pause|resume|remove``: standing work (``/every`` in a chat) from the terminal.

Whoever runs the CLI on the board's folder is the owner. ``add`` reads the same phrases as ``/every``
(:mod:`board.schedule.recurrence`: ``sabha schedule add "monday 9am brief"``); the item runs in the place
``--channel``/``--chat``/``--thread`` name, by default the owner's own chat on the first configured channel
(Telegram's first allowed user, WhatsApp's first allowed number). The running daemon is woken at once (on
SQLite its wake endpoint, on PostgreSQL ``NOTIFY``), so the new item's next run is in ``sabha status`` and the
daemon's plan right away. Listing never creates a state database. Exit codes: 0 done, 2 bad input (a phrase
that cannot be read, an unknown item, one already paused), and nothing is changed then.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from bot.cli.common import UserError, emit

if TYPE_CHECKING:
    from board.app import Parts
    from board.schedule.standing_store import StandingItem
    from bot.config import LoadedConfig

__all__ = ["add_parsers", "cmd_schedule"]

NO_ITEMS = 'no standing work yet: sabha schedule add "monday 9am brief" (or /every monday 9am brief in a chat)'
ACTIONS = ("add", "list", "pause", "resume", "remove")


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``sabha schedule`` to the ``sabha`` parser."""
    p = sub.add_parser("schedule", parents=[common], help="standing work: briefs, meetings, roundtables on a rhythm",
                       description="Standing work the board does on a rhythm, as /every sets it in a chat: a brief "
                                   "of what changed, a meeting or a roundtable on a topic. Each run happens once, in "
                                   "the place the item was set; times are board.timezone's unless the phrase names "
                                   "a zone.")
    ssub = p.add_subparsers(dest="schedule_command", metavar="ACTION", required=True)
    ap = ssub.add_parser("add", parents=[common], help='set standing work: sabha schedule add "monday 9am brief"')
    ap.add_argument("phrase", nargs="+", help='when and what, as after /every: "monday 9am brief", "other friday '
                                             'roundtable growth ideas", "1st of month meeting review our burn"')
    ap.add_argument("--channel", help="where it runs: the channel (default: the owner's chat on the first one)")
    ap.add_argument("--chat", help="the chat id in that channel")
    ap.add_argument("--thread", type=int, help="the topic or thread id in that chat (Telegram forum topics)")
    lp = ssub.add_parser("list", parents=[common], help="the standing items, their place and next run")
    lp.add_argument("--all", action="store_true", help="include removed items")
    lp.add_argument("--json", action="store_true", help="as JSON")
    for verb, what in (("pause", "pause an item (its next run is cancelled)"),
                       ("resume", "start a paused item again (its next run from now)"),
                       ("remove", "remove an item (its runs are kept in the record)")):
        vp = ssub.add_parser(verb, parents=[common], help=what)
        vp.add_argument("item", type=int, help="the item's number (sabha schedule list)")
    p.set_defaults(handler=_handler)


async def _handler(args: argparse.Namespace) -> int:
    from bot.cli.where import has_state, open_config, with_board

    writes = args.schedule_command != "list"
    loaded = open_config(args, writes=writes)
    if not writes and not has_state(loaded):
        emit(NO_ITEMS)
        return 0
    return await with_board(loaded, lambda board: cmd_schedule(board.parts, loaded, args))


def _place(loaded: LoadedConfig, args: argparse.Namespace) -> tuple[str, str, int | None]:
    if args.channel or args.chat:
        if not (args.channel and args.chat):
            raise UserError("say both where it runs: --channel telegram --chat -100123 (and --thread N for a topic)")
        return args.channel, args.chat, args.thread
    chats = loaded.config.owner_chats()
    if not chats:
        raise UserError("no channel names the owner's chat (telegram.allowed_user_ids, whatsapp.allowed_numbers): "
                        "say where it runs with --channel and --chat, or set it with /every in that chat")
    channel, chat = chats[0]
    return channel, chat, args.thread


def _json(item: StandingItem) -> dict[str, Any]:
    return {"id": item.id, "kind": item.kind.value, "topic": item.topic, "when": item.said, "phrase": item.phrase,
            "channel": item.place.channel, "chat_id": item.place.chat_id, "thread_id": item.place.thread_id,
            "status": item.status.value, "next_at": item.next_at.isoformat() if item.next_at else None}


async def cmd_schedule(parts: Parts, loaded: LoadedConfig, args: argparse.Namespace) -> int:
    """schedule add PHRASE | list | pause N | resume N | remove N."""
    from board.schedule.dates import DateProblem, describe
    from board.schedule.standing import StandingProblem
    from board.schedule.standing_store import ItemStatus
    from board.schedule.work import Place

    work, action = parts.standing, args.schedule_command
    try:
        if action == "add":
            item = await work.add(" ".join(args.phrase), Place(*_place(loaded, args)), "cli")
            first = describe(item.next_at, item.recurrence.tz()) if item.next_at else "not scheduled"
            emit(f"Standing item #{item.id}: {item.title()}, in {item.place}. First run {first}.")
            return 0
        if action == "list":
            items = await work.store.items(include_removed=args.all)
            if args.json:
                emit(json.dumps([_json(i) for i in items], indent=2, ensure_ascii=False))
            elif not items:
                emit(NO_ITEMS)
            for item in [] if args.json else items:
                state = (f"next {describe(item.next_at, item.recurrence.tz())}"
                         if item.status is ItemStatus.ACTIVE and item.next_at else item.status.value)
                emit(f"#{item.id} {item.title()} in {item.place}: {state}; ${await work.month_cost(item):.2f} "
                     "this month")
            return 0
        change = {"pause": work.pause, "resume": work.resume, "remove": work.remove}[action]
        item = await change(args.item)
    except (DateProblem, StandingProblem) as problem:
        said = str(problem).replace("/standing lists them", "`sabha schedule list` lists them")
        sys.stderr.write(f"sabha: {said.replace('/standing ', 'sabha schedule ')}\n")
        return 2
    state = f"next run {describe(item.next_at, item.recurrence.tz())}" if item.next_at else "no run scheduled"
    emit(f"{action.capitalize()}d #{item.id} {item.title()}; {state}.")
    return 0
