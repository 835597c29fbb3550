"""Slash commands for standing work (:mod:`board.schedule.standing`): ``/every`` and ``/standing``.

- ``/every <when> <what> [topic]``: ``/every monday 9am brief``, ``/every other friday roundtable growth ideas
  for Q1``, ``/every 1st of month meeting review our burn``; it runs here (this chat, this topic), its times
  in ``board.timezone`` unless the phrase names a zone. What cannot be read is answered with what can be;
  nothing is stored.
- ``/standing`` lists the items with their next run and what they cost this month; ``/standing pause <n>``,
  ``/standing resume <n>`` and ``/standing remove <n>`` change one.

Setting, pausing, resuming and removing are the owner's: ``/every`` is owner-only, and a member's
``/standing pause`` (resume, remove) is refused with one line and nothing changes. Anyone may list the items
set in their chat; the owner sees all.
"""

from __future__ import annotations

from board.commands.host import CommandHost
from board.commands.registry import OWNER_ONLY
from board.envelope import Envelope
from board.routing.router import Route
from board.schedule.dates import DateProblem, describe
from board.schedule.recurrence import EVERY_UNDERSTOOD
from board.schedule.standing import StandingProblem, StandingWork
from board.schedule.standing_store import ItemStatus, StandingItem
from board.schedule.work import Place

__all__ = ["register", "standing_list"]

_VERBS = ("pause", "resume", "remove")


def _where(item: StandingItem, envelope: Envelope) -> str:
    here = (item.place.channel, item.place.chat_id, item.place.thread_id) == (
        envelope.channel, envelope.chat_id, envelope.thread_id)
    return "here" if here else f"in {item.place}"


async def standing_list(work: StandingWork, envelope: Envelope) -> str:
    """``/standing``: the items (of this chat, for anyone but the owner), their next run and month's cost."""
    place = None if envelope.is_owner else (envelope.channel, envelope.chat_id)
    items = await work.items(place)
    if not items:
        return f"No standing work. Set some with /every, e.g. {EVERY_UNDERSTOOD.split(', ')[0]}."
    lines = [f"Standing work ({len(items)}); /standing pause|resume|remove <n> changes one:"]
    for item in items:
        zone = item.recurrence.tz()
        state = (f"next {describe(item.next_at, zone)}" if item.status is ItemStatus.ACTIVE and item.next_at
                 else item.status.value)
        cost = await work.month_cost(item)
        lines.append(f"#{item.id} {item.title()}, {_where(item, envelope)}: {state}; ${cost:.2f} this month")
    return "\n".join(lines)


def register(host: CommandHost, work: StandingWork) -> None:
    """Add ``/every`` and ``/standing`` on ``work`` to ``host``."""

    async def every(envelope: Envelope, route: Route) -> str:
        phrase = route.text.strip()
        if not phrase:
            return f"Say when and what: {EVERY_UNDERSTOOD}."
        try:
            item = await work.add(phrase, Place(envelope.channel, envelope.chat_id, envelope.thread_id),
                                  f"{envelope.channel}:{envelope.sender}")
        except (DateProblem, StandingProblem) as problem:
            return str(problem)
        zone = item.recurrence.tz()
        first = describe(item.next_at, zone) if item.next_at else "not scheduled"
        return (f"Standing item #{item.id}: {item.title()}, here. First run {first}. "
                f"/standing lists it; /standing pause {item.id} or /standing remove {item.id} stops it.")

    async def standing(envelope: Envelope, route: Route) -> str:
        verb, _, rest = route.text.strip().partition(" ")
        verb = verb.lower()
        if verb in ("", "list", "all"):
            return await standing_list(work, envelope)
        if verb not in _VERBS:
            return "Say /standing to list, or /standing pause|resume|remove <n>."
        if not envelope.is_owner:
            return OWNER_ONLY.format(command=f"standing {verb}")
        word = rest.strip().lstrip("#")
        if not word.isdigit():
            return f"Say which item: /standing {verb} <n> (/standing lists them)."
        change = {"pause": work.pause, "resume": work.resume, "remove": work.remove}[verb]
        try:
            item = await change(int(word))
        except StandingProblem as problem:
            return str(problem)
        if verb == "resume" and item.next_at:
            return f"Resumed #{item.id} {item.title()}; next run {describe(item.next_at, item.recurrence.tz())}."
        return f"{verb.capitalize()}d #{item.id} {item.title()}; no run is scheduled" + (
            f" until /standing resume {item.id}." if verb == "pause" else ".")

    host.register_command("every", every, "/every <when> <brief|meeting|roundtable> [topic]: standing work here, "
                                          "e.g. /every monday 9am brief", owner_only=True)
    host.register_command("standing", standing, "/standing [pause|resume|remove <n>]: the standing work, its next "
                                                "runs and cost")
