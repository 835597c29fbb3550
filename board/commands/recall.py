"""``/recall <words>``: a person searches what was said and decided before, within what they may see.

The same search the advisors' ``recall`` tool runs (:class:`board.recall.service.RecallService`), as the sender:
their own conversations on every linked account in a direct chat, only this group's in a group, and the board's
meetings and decisions (a stranger sees only their own conversation). Each line names where it came from.
"""

from __future__ import annotations

from board.commands.host import CommandHost
from board.envelope import Envelope
from board.recall.audience import asker_of
from board.recall.passages import Passage
from board.recall.service import RecallService
from board.routing.router import Route
from board.storage import Database
from board.workspace.quoting import plain_line

__all__ = ["LINE_CHARS", "RESULTS", "recall_lines", "register"]

#: How many passages ``/recall`` shows.
RESULTS = 5
#: What one passage may take of the reply.
LINE_CHARS = 280

USAGE = "Send /recall and the words to look for, e.g. /recall Pune office."


def recall_lines(query: str, passages: list[Passage]) -> str:
    """The reply: one line per passage, its citation first."""
    if not passages:
        return (f"Nothing found for {plain_line(query, 80)!r} in what you may see. Try other words: names, places "
                "and terms work best. (What was said a moment ago is found a few seconds later.)")
    head = f"Found {len(passages)} for {plain_line(query, 80)!r}:"
    lines = [f"{p.cite} {p.speaker}: {plain_line(p.text, LINE_CHARS)}" for p in passages]
    return "\n".join([head, *lines])


def register(host: CommandHost, service: RecallService, db: Database) -> None:
    """Add ``/recall``."""

    async def recall(envelope: Envelope, route: Route) -> str:
        query = " ".join(route.text.split())
        if not query:
            return USAGE
        asker = await asker_of(db, envelope, role=route.role)
        return recall_lines(query, await service.recall(query, asker, limit=RESULTS))

    host.register_command("recall", recall, "/recall <words>: search earlier conversations, meetings and decisions")
