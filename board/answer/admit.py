"""Admission: what a message passes before anything is paid for, as stages in a tuple.

:data:`STAGES` runs in order (clean -> limit -> identify -> route -> gate); each stage takes what
admission knows so far (:class:`Asking`) and returns the next :class:`Asking`, or the one-line
:class:`Reply` that ends it (a message too long, an unknown role, meetings off, a stranger asking for a
meeting). What passes is :class:`Admitted`: frozen, made only here, so holding one means the envelope
was cleaned once and its sender identified once; the budget is asked at most once (for a message with
attachments before their read, and the answer travels along to the dispatch).

The intake cleans every envelope at receipt, before it is stored: it hands it over saying so
(``received_clean``), and the clean stage does not clean it again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from board.answer.door import Door
from board.commands.registry import system_reply
from board.envelope import Envelope, Reply, cleaned
from board.roles import GENERAL
from board.room.settings import MEETINGS_OFF
from board.routing.router import Route
from board.spending.allowance import Allowance
from board.spending.budget import BudgetStop, sender_id
from board.telemetry.spans import traced

__all__ = ["MODEL_COMMANDS", "STAGES", "Admitted", "Asking", "Stage", "admit", "calls_model", "identify",
           "with_owner_note"]

log = logging.getLogger("sabha.board")

MODEL_COMMANDS = frozenset({"compact"})  # commands that call a model (besides meetings)


@dataclass(frozen=True, kw_only=True)
class Asking:
    """What admission knows so far; each stage returns a new one."""

    given: Envelope  # as handed over (a route offered for it stays good while the envelope is this one)
    envelope: Envelope
    clean: bool = False
    offered: Route | None = None
    route: Route | None = None


@dataclass(frozen=True, kw_only=True)
class Admitted:
    """A message that passed admission: cleaned and identified once, routed, gated."""

    envelope: Envelope
    route: Route
    sender: str
    allowance: Allowance | None  # a stranger's limits; None for everyone else
    stop: BudgetStop | None = None  # the budget's answer, when asked (``checked``)
    checked: bool = False  # asked already: reading attachments would pay, so it was asked before the read

    async def budget_stop(self, door: Door) -> BudgetStop | None:
        """The budget's answer for this message: asked at most once per message."""
        if self.checked:
            return self.stop
        return await door.budget.check(self.sender, is_owner=self.envelope.is_owner)


Stage = Callable[[Asking, Door], Awaitable[Asking | Reply]]


def calls_model(route: Route) -> bool:
    """Whether answering ``route`` calls a model (what the budget guards)."""
    return route.kind in ("chat", "meeting") or (route.kind == "command" and route.command in MODEL_COMMANDS)


async def identify(door: Door, envelope: Envelope) -> Envelope:
    """``envelope`` with its linked person, if any (:meth:`People.identify`); a failed lookup logs and
    answers as the account alone rather than not at all."""
    try:
        return await door.people.identify(envelope)
    except Exception:
        log.exception("people: looking up the person of %s on %s failed", envelope.sender, envelope.channel)
        return envelope


async def _clean(asking: Asking, door: Door) -> Asking | Reply:
    """Lone surrogates cannot be written to a transcript: made valid once (not again when received clean)."""
    return asking if asking.clean else replace(asking, envelope=cleaned(asking.envelope), clean=True)


async def _limit(asking: Asking, door: Door) -> Asking | Reply:
    """A message over ``max_message_chars`` is answered with what to do, not sent to any model."""
    envelope, limit = asking.envelope, door.max_message_chars
    if len(envelope.text) <= limit:
        return asking
    log.warning("message from %s on %s is %d characters (limit %d); not sent to any model",
                envelope.sender, envelope.channel, len(envelope.text), limit)
    return system_reply(door.souls, envelope, envelope.role_hint or GENERAL,
                        f"That message is {len(envelope.text):,} characters long; the limit is {limit:,}. "
                        "Send the part that matters, or a summary, and I will answer it.", kind="error")


async def _identify(asking: Asking, door: Door) -> Asking | Reply:
    """A linked person: their key, maybe a shared session (looked up once per message)."""
    return replace(asking, envelope=await identify(door, asking.envelope))


async def _route(asking: Asking, door: Door) -> Asking | Reply:
    """The role and session (the route offered for this very envelope, unless cleaning or the person changed it)."""
    route = asking.offered
    if route is None or asking.envelope is not asking.given:
        route = door.router().route(asking.envelope)
    log.debug("route: %s%s (%s)", route.role, "".join(f", {r}" for r in route.also), route.reason)
    return replace(asking, route=route)


async def _gate(asking: Asking, door: Door) -> Asking | Reply:
    """What may not be answered at all: a route error, an empty chat, a meeting where meetings are off or
    a stranger may not convene one."""
    envelope, route = asking.envelope, asking.route
    assert route is not None
    refusal: str | None = None
    if route.error:
        refusal = route.error
    elif route.kind == "chat" and not route.text and not envelope.attachments:
        refusal = "Send a message with some text."
    elif route.kind == "meeting" and not door.meetings_enabled:  # an answer to what was asked: with the note
        return with_owner_note(door, envelope, system_reply(door.souls, envelope, route.role, MEETINGS_OFF,
                                                            kind="error"))
    elif route.kind == "meeting" and envelope.is_public:
        terms = door.money.allowance_for(envelope).terms
        refusal = None if terms.meetings else terms.meetings_text
    if refusal is not None:
        return system_reply(door.souls, envelope, route.role, refusal, kind="error")
    return asking


def with_owner_note(door: Door, envelope: Envelope, reply: Reply) -> Reply:
    """The owner's reply carries what the budget has not told them yet (once a day per limit): every answer
    to what was asked, refusals of the gate included; not the refusals of a message that could not be read
    (too long, an unknown role, nothing said)."""
    if not envelope.is_owner:
        return reply
    note = door.budget.owner_note()
    return reply if note is None else replace(reply, text=f"{reply.text}\n\n{note}")


#: Admission, in order.
STAGES: tuple[Stage, ...] = (_clean, _limit, _identify, _route, _gate)


@traced("admission")
async def admit(envelope: Envelope, door: Door, *, route: Route | None = None, received_clean: bool = False,
                reads_files: bool = False) -> Admitted | Reply:
    """Run :data:`STAGES` over ``envelope``; the admitted message, or the reply that refused it.
    ``route``: what the router made of this very envelope a moment ago (``sabha ask``); ``received_clean``:
    the envelope was cleaned at receipt (the intake's); ``reads_files``: its attachments are read next (so the
    budget is asked now, once, before anything is downloaded)."""
    asking: Asking | Reply = Asking(given=envelope, envelope=envelope, clean=received_clean, offered=route)
    for stage in STAGES:
        assert isinstance(asking, Asking)
        asking = await stage(asking, door)
        if isinstance(asking, Reply):
            return asking
    assert isinstance(asking, Asking) and asking.route is not None
    admitted, final = asking.envelope, asking.route
    sender = sender_id(admitted)
    allowance = door.money.allowance_of(admitted)
    if not (reads_files and admitted.attachments):  # asked by the dispatch, if answering calls a model
        return Admitted(envelope=admitted, route=final, sender=sender, allowance=allowance)
    stop = await door.budget.check(sender, is_owner=admitted.is_owner)  # reading the files would pay
    return Admitted(envelope=admitted, route=final, sender=sender, allowance=allowance, stop=stop, checked=True)
