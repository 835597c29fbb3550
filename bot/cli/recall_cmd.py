"""``sabha recall "<question>"``: the owner searches everything the board remembers, from the terminal.

Whoever runs the CLI on the board's folder is the owner, so this is the owner's view: every conversation,
meeting, decision, document and knowledge file (advisors and ``/recall`` see only what their asker may see,
:mod:`board.recall.audience`). It first indexes what the daemon has not indexed yet (the daemon indexes in the
background; this command may run while it is stopped) and, with ``memory.embedding_model`` set, embeds what is not
embedded yet, then prints the passages, each with its citation.
Exit codes: 0 found or not (said so), 2 no words to look for.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from bot.cli.common import emit
from bot.cli.where import board_command

if TYPE_CHECKING:
    from board.app import Parts

__all__ = ["add_parsers", "cmd_recall"]

NOTHING_YET = "nothing recorded yet: recall searches what was said to the board (sabha chat, or a channel)"


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``sabha recall`` to the ``sabha`` parser."""
    p = sub.add_parser("recall", parents=[common], help="search earlier conversations, meetings and decisions",
                       description="Search everything the board remembers (the owner's view): conversations on "
                                   "every channel, meetings, decisions and minutes, documents and the knowledge "
                                   "base. Each passage says where it came from, e.g. [meeting m-..., round 2].")
    p.add_argument("question", nargs="+", help="the words to look for (names, places and terms work best)")
    p.add_argument("--limit", type=int, default=10, metavar="N", help="how many passages (default 10)")
    p.add_argument("--json", action="store_true", help="as JSON")
    p.set_defaults(handler=_handler)


async def _handler(args: argparse.Namespace) -> int:
    return await board_command(cmd_recall, writes=False, empty=NOTHING_YET)(args)


async def cmd_recall(parts: Parts, args: argparse.Namespace) -> int:
    """recall QUESTION... [--limit N] [--json]."""
    from board.recall.passages import Asker
    from board.workspace.quoting import plain_line

    query = " ".join(" ".join(args.question).split())
    if not query or args.limit < 1:
        emit('say what to look for, e.g. sabha recall "Pune office" (and --limit 1 or more)')
        return 2
    while await parts.recall_indexer.run_once():  # what the daemon has not indexed yet
        pass
    if parts.recall_vectors is not None:  # and not embedded yet (memory.embedding_model; each call in the ledger)
        try:
            while await parts.recall_vectors.run_once():
                pass
        except Exception as exc:  # noqa: BLE001 - the model failing leaves recall by words: say so, go on
            emit(f"(recall by meaning: the embedding model failed, {exc}; searching what is embedded and by words)")
    found = await parts.recall.recall(query, Asker.owner_view(), limit=args.limit)
    if args.json:
        emit(json.dumps([{"cite": p.cite, "source": p.source.value, "said_by": p.speaker, "date": p.said_at[:10],
                          "text": p.text} for p in found], ensure_ascii=False, indent=2))
        return 0
    if not found:
        emit(f"nothing found for {query!r}: try other words (names, places and terms work best)")
        return 0
    for p in found:
        emit(f"{p.cite} {p.speaker}: {plain_line(p.text, 400)}")
    return 0
