"""The owner's consent before a tool that changes the world runs: :class:`OwnerConsent`, the
:class:`board.agent.outside.ConsentGate` of a board (``parts.consent``).

``ask`` records the call (:mod:`.store`), then:

- a tool the owner always allows runs at once (the row is written answered and started in one insert);
- over a channel where no one reads a later message (``ConsentSettings.unreachable``: the board's MCP server)
  nobody can be asked: ``UNAVAILABLE`` at once, saying how the owner can allow the tool; nothing is stored;
- else the owner is asked in the conversation's place (a member's advisor asks in the owner's own place, the
  last one the owner wrote from on that channel, told by the front door, :meth:`OwnerConsent.seen`, and tells
  the member it waits for the owner) with Allow once /
  Always allow this tool / Deny buttons, posted as scheduled work (claimed before it is sent, like a reminder);
  the turn waits up to ``timeout_s`` for :meth:`OwnerConsent.decide` (``/allow``, ``/deny``, a press, ``sabha
  tools``), here or in another process (the row is read again every ``poll_s``), then answers without the call;
- an allowed call is marked started before ``ask`` returns, and :meth:`OwnerConsent.finished` records its end.

The same call asked again (its key: the message, the tool, the arguments) never runs twice: one that finished
returns what it gave; one started and not finished (Sabha stopped between the Allow and the answer) is "may
have run", never repeated, and the owner is told once where the owner last wrote on that channel (the MCP
manager leaves a call whose outcome is unknown, a timeout or a cancelled answer, started and unfinished:
"may have run" too). ``/allow`` without a number answers only a question asked in the place it comes from.
Strangers (a public chat) and
contexts with no message to answer cannot ask anyone: ``UNAVAILABLE``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from board.agent.outside import ConsentAsk, ConsentKind, ConsentVerdict
from board.envelope import Envelope, Reply
from board.schedule.work import NewWork, Place, ScheduledWork, WorkKind, parse_stamp
from board.tools.consent.store import Answer, ApprovalRow, ApprovalStore
from board.tools.consent.words import ask_buttons, ask_text, span_words

if TYPE_CHECKING:
    from board.agent.tools import ToolContext
    from board.clock import Clock
    from board.schedule import Schedule

__all__ = ["ConsentSettings", "Decided", "OwnerConsent", "Voice"]

log = logging.getLogger("sabha.consent")

#: role -> (name, emoji) of the advisor, for the words Sabha says in its name (None: the role itself)
Voice = Callable[[str], "tuple[str, str] | None"]
_SUMMARY_CHARS = 500
_DEADLINE_MARGIN_S = 5.0  # a turn's deadline leaves this long to answer without the call
_STALE_MARGIN_S = 30.0  # past the limit and this, no turn waits for a row any more


@dataclass(frozen=True)
class ConsentSettings:
    """``tools.consent_timeout_s`` and how often a waiting turn reads its row again (an answer given in another
    process: ``sabha tools``, another replica)."""

    timeout_s: float = 120.0
    poll_s: float = 1.0
    #: channels whose place no one reads a later message in (the board's MCP server's clients): a call asked
    #: for there is refused at once, saying how the owner can allow the tool
    unreachable: frozenset[str] = frozenset({"mcp"})
    #: (channel, chat id) of the owner's own chat as the config names it (Telegram's first allowed user, WhatsApp's
    #: first allowed number): where a member's request goes on that channel until the owner has written there
    owner_chats: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Decided:
    """What came of an answer: ``changed`` (it was the answer that counted) and the line that says so."""

    changed: bool
    text: str


def _place(envelope: Envelope) -> Place:
    return Place(envelope.channel, envelope.chat_id, envelope.thread_id)


class OwnerConsent:
    """See the module docstring."""

    def __init__(self, store: ApprovalStore, schedule: Schedule, clock: Clock,
                 settings: ConsentSettings | None = None, *, voice: Voice | None = None) -> None:
        self.store = store
        self.schedule = schedule
        self.clock = clock
        self.settings = settings or ConsentSettings()
        self.voice = voice
        self._answered: dict[int, asyncio.Event] = {}
        self._owner_at: dict[str, Place] = {}  # where the owner last wrote, by channel (as stored)
        schedule.register(WorkKind.CONSENT, self.post)

    # -- asking ------------------------------------------------------------------------------------

    async def ask(self, ask: ConsentAsk, ctx: ToolContext) -> ConsentVerdict:
        """The owner's answer to ``ask`` (see the module docstring); a verdict that runs is recorded started."""
        envelope = ctx.envelope
        if envelope is None or envelope.is_public:
            return ConsentVerdict(ConsentKind.UNAVAILABLE, note=(
                f"{ask.origin.label} changes things outside Sabha and only the board's owner can allow it, who "
                "cannot be asked from here; it was not run. Answer without it and say so."))
        row = await self.store.get(ask.key)
        if row is not None:
            return await self._again(row, ctx)
        now = self.clock.now()
        if envelope.is_owner:
            await self.seen(envelope)
        if await self.store.is_always(ask.origin.server, ask.origin.tool):
            row = await self.store.asked(ask, _place(envelope), envelope.sender, now, answer=Answer.ALWAYS_ALLOWED)
            if row is not None:
                log.info("consent #%d: %s runs for %s (always allowed)", row.id, row.label, ask.role)
                return ConsentVerdict(ConsentKind.ALWAYS_ALLOWED, ticket=str(row.id))
        elif envelope.channel in self.settings.unreachable:
            log.info("consent: %s wants %s over %s, where the owner cannot be asked; not run", ask.role,
                     ask.origin.label, envelope.channel)
            return ConsentVerdict(ConsentKind.UNAVAILABLE, note=(
                f"{ask.origin.label} changes things outside Sabha and runs only with the board's owner's consent, "
                f"which cannot be asked over {envelope.channel}; it was not run. Answer without it and say so: the "
                f"owner can allow it with `sabha tools allow {ask.origin.label}` (it then runs without asking), "
                "and ask again."))
        else:
            row = await self.store.asked(ask, _place(envelope), envelope.sender, now)
            if row is not None:
                await self._post_ask(row, envelope)
                return await self._wait(row, ctx)
        stored = await self.store.get(ask.key)  # asked meanwhile by a turn in another process
        assert stored is not None
        return await self._again(stored, ctx)

    async def seen(self, envelope: Envelope) -> None:
        """The owner wrote ``envelope``: where a question for a member's advisor and a notice go on its channel
        (the front door tells every owner's message; a public or unreachable place is not one)."""
        if not envelope.is_owner or envelope.is_public or envelope.channel in self.settings.unreachable:
            return
        place = _place(envelope)
        if self._owner_at.get(place.channel) == place:
            return
        await self.store.seen_owner(place, self.clock.now())
        self._owner_at[place.channel] = place

    async def _owner_place(self, channel: str) -> Place | None:
        """Where the owner last wrote on ``channel``; before that, the owner's own chat as the config names it."""
        found = self._owner_at.get(channel) or await self.store.owner_place(channel)
        if found is not None:
            self._owner_at[channel] = found
            return found
        configured = dict(self.settings.owner_chats).get(channel)
        return None if configured is None else Place(channel, configured, None)

    async def _post_ask(self, row: ApprovalRow, envelope: Envelope) -> None:
        """Post the owner's question (and, for a member, where it went) as scheduled work due now."""
        now = self.clock.now()
        place = _place(envelope)
        if not envelope.is_owner:
            owner = await self._owner_place(envelope.channel)
            if owner is None:
                log.warning("consent #%d: the owner has not written on %s yet and the config names no owner there, "
                            "so the question goes to the conversation's own place (%s)", row.id, envelope.channel,
                            place)
            elif owner != place:
                await self.schedule.add(NewWork(WorkKind.CONSENT, f"consent:waiting:{row.id}", now, place,
                                                {"approval": row.id, "say": "waiting"}))
                place = owner
        await self.schedule.add(NewWork(WorkKind.CONSENT, f"consent:ask:{row.id}", now, place,
                                        {"approval": row.id, "say": "ask", "for": None if envelope.is_owner
                                         else (envelope.sender_name or envelope.sender)}))
        log.info("consent #%d: %s asks the owner to run %s (in %s); waiting up to %s", row.id, row.role, row.label,
                 place, span_words(self.settings.timeout_s))

    async def _wait(self, row: ApprovalRow, ctx: ToolContext) -> ConsentVerdict:
        """Wait for the answer to ``row`` up to the limit (and the turn's deadline), then the verdict."""
        loop = asyncio.get_running_loop()
        limit = self.settings.timeout_s
        if ctx.deadline is not None:
            limit = max(0.0, min(limit, ctx.deadline - loop.time() - _DEADLINE_MARGIN_S))
        end = loop.time() + limit
        event = self._answered.setdefault(row.id, asyncio.Event())
        try:
            while True:
                current = await self.store.number(row.id)
                if current is not None and current.answer is not None:
                    return await self._verdict(current)
                left = end - loop.time()
                if left <= 0:
                    timed = await self.store.answer(row.id, Answer.TIMED_OUT, "clock", self.clock.now())
                    current = timed or await self.store.number(row.id)
                    assert current is not None
                    if timed is not None:
                        log.info("consent #%d: no answer within %s; %s was not run", row.id, span_words(limit),
                                 row.label)
                    return await self._verdict(current, waited=limit)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(min(left, self.settings.poll_s)):
                        await event.wait()
        finally:
            self._answered.pop(row.id, None)

    async def _verdict(self, row: ApprovalRow, *, waited: float | None = None) -> ConsentVerdict:
        """The verdict of an answered row; an allowed one is marked started first (or found started already).
        ``waited``: how long this turn waited (the limit, or less when the turn's deadline was nearer)."""
        ticket = str(row.id)
        if row.answer in Answer.RUNS:
            if await self.store.start(row.id, self.clock.now()):
                kind = ConsentKind.ALLOWED_ONCE if row.answer == Answer.ALLOWED_ONCE else ConsentKind.ALWAYS_ALLOWED
                log.info("consent #%d: %s allowed (%s); recorded as started before the call", row.id, row.label,
                         row.answer)
                return ConsentVerdict(kind, ticket=ticket)
            current = await self.store.number(row.id)
            return await self._ran(current or row)
        if row.answer == Answer.DENIED:
            return ConsentVerdict(ConsentKind.DENIED, ticket=ticket, note=(
                f"The owner denied {row.label} (#{row.id}); it was not run. Answer without it and say so."))
        return ConsentVerdict(ConsentKind.TIMED_OUT, ticket=ticket, note=(
            f"The owner did not answer within {span_words(self.settings.timeout_s if waited is None else waited)} "
            f"whether {row.label} may run "
            f"(#{row.id}); it was not run. Answer without it and say so (the owner can allow it and ask again)."))

    async def _again(self, row: ApprovalRow, ctx: ToolContext) -> ConsentVerdict:
        """The same call asked again (after a restart, a retried turn): never run twice."""
        if row.started_at is not None:
            return await self._ran(row)
        if row.answer is None:
            log.info("consent #%d: %s asked again; still waiting for the owner", row.id, row.label)
            return await self._wait(row, ctx)
        return await self._verdict(row)

    async def _ran(self, row: ApprovalRow) -> ConsentVerdict:
        """A call started before (asked again: the message is answered again after a stop): what it gave (it
        finished) or "may have run" (it did not); never run again, and the owner is told once."""
        details = {"number": row.id, "started_at": row.started_at, "finished_at": row.finished_at}
        owner = await self._owner_place(row.place.channel) if row.place is not None else None
        place = owner or row.place  # the owner is told, where the owner last wrote on that channel
        if place is not None and await self.store.reported(row.id, self.clock.now()):
            await self.schedule.add(NewWork(WorkKind.CONSENT, f"consent:may-have-run:{row.id}", self.clock.now(),
                                            place, {"approval": row.id, "say": "ran_before"}))
            log.warning("consent #%d: %s was allowed and %s before; it is not run again", row.id, row.label,
                        "ran" if row.finished_at is not None else "started with no outcome recorded (it may have run)")
        if row.finished_at is not None:
            how = "and succeeded" if row.ok else "and failed"
            return ConsentVerdict(ConsentKind.MAY_HAVE_RUN, ticket=str(row.id), details=details, note=(
                f"{row.label} (#{row.id}) ran already {how}: {row.summary or 'no result kept'}. It was not run "
                "again; answer from that."))
        return ConsentVerdict(ConsentKind.MAY_HAVE_RUN, ticket=str(row.id), details=details, note=(
            f"{row.label} (#{row.id}) was allowed and started, but how it ended is not known (it gave no answer "
            "in time, its answer was cancelled, or Sabha stopped): it may already have run. It was not run "
            "again. Answer without its result and say so: the owner can check whether it took effect."))

    async def finished(self, verdict: ConsentVerdict, *, ok: bool, summary: str) -> None:
        """Record that the allowed call of ``verdict`` has run."""
        if verdict.ticket is None or not verdict.runs:
            return
        number = int(verdict.ticket)
        if await self.store.finish(number, ok=ok, summary=summary[:_SUMMARY_CHARS], now=self.clock.now()):
            log.info("consent #%d: the call finished (%s)", number, "ok" if ok else "failed")

    # -- answering -----------------------------------------------------------------------------------

    async def decide(self, number: int | None, answer: str, *, by: str, place: Place | None = None) -> Decided:
        """The owner's answer to ask ``#number`` (None: the only one waiting): ``allowed_once``,
        ``always_allowed`` (the tool is always allowed from now on) or ``denied``."""
        row = await self._chosen(number, place)
        if isinstance(row, str):
            return Decided(False, row)
        now = self.clock.now()
        answered = await self.store.answer(row.id, answer, by, now)
        if answered is None:
            current = await self.store.number(row.id) or row
            return Decided(False, f"#{row.id} ({current.label}) was {_said(current)} already; nothing changed.")
        if answer == Answer.ALWAYS_ALLOWED:
            await self.store.allow_always(row.server, row.tool, by, now)
        event = self._answered.get(row.id)
        if event is not None:
            event.set()
        log.info("consent #%d: %s %s by %s", row.id, row.label, answer, by)
        return Decided(True, _decided_text(answered))

    async def _chosen(self, number: int | None, place: Place | None) -> ApprovalRow | str:
        """The row ``number`` names, or else the only one waiting whose question was posted in ``place`` (the
        place the answer comes from; None: the owner's own terminal, ``sabha tools``); else what to say."""
        if number is not None:
            row = await self.store.number(number)
            return row if row is not None else f"There is no tool call #{number} waiting for consent."
        # a row asked longer ago than any turn waits is left by a turn that ended without an answer (cancelled, or
        # Sabha stopped): only its number answers it
        fresh_after = self.clock.now() - timedelta(seconds=self.settings.timeout_s + _STALE_MARGIN_S)
        waiting = [r for r in await self.store.waiting() if parse_stamp(r.asked_at) >= fresh_after]
        here = [r for r in waiting if place is None or await self._asked_in(r, place)]
        if len(here) == 1:
            return here[0]
        if not waiting:
            return "No tool call is waiting for your consent."
        listed = "; ".join(f"#{r.id} {r.label} ({r.role})" for r in waiting)
        if not here:
            return (f"No tool call asked here is waiting; {len(waiting)} asked elsewhere: {listed}. "
                    "Say which: /allow <n> or /deny <n>.")
        listed = "; ".join(f"#{r.id} {r.label} ({r.role})" for r in here)
        return f"{len(here)} tool calls are waiting: {listed}. Say which: /allow <n> or /deny <n>."

    async def _asked_in(self, row: ApprovalRow, place: Place) -> bool:
        """Whether ``row``'s question was posted in ``place``."""
        posted = await self.schedule.get(f"consent:ask:{row.id}")
        where = posted.place if posted is not None else row.place
        return where is not None and (where.channel, where.chat_id, where.thread_id) == \
            (place.channel, place.chat_id, place.thread_id)

    # -- what is posted ---------------------------------------------------------------------------------

    async def post(self, work: ScheduledWork) -> Reply | None:
        """The CONSENT handler: the owner's question, the member's "waiting", the "may have run" notice."""
        row = await self.store.number(int(work.payload.get("approval", 0)))
        if row is None:
            return None
        say = str(work.payload.get("say") or "")
        found = self.voice(row.role) if self.voice is not None else None
        name, emoji = found or (row.role, "")
        if say == "ask":
            if row.answer is not None:  # answered (or timed out) before the question went out: nothing to ask
                return None
            who = work.payload.get("for")
            text = ask_text(number=row.id, label=row.label, advisor=name, arguments=row.arguments,
                            wait_s=self.settings.timeout_s, for_member=str(who) if who else None)
            return work.reply(text, role=row.role, name=name, emoji=emoji, buttons=ask_buttons(row.id))
        if say == "waiting":
            return work.reply(f"{name} wants to run {row.label}, which changes things outside Sabha: it waits up to "
                              f"{span_words(self.settings.timeout_s)} for the board's owner to allow it (#{row.id}).",
                              role=row.role, name=name, emoji=emoji)
        if row.finished_at is not None:
            how = "it succeeded" if row.ok else "it failed"
            return work.reply(f"\u26a0\ufe0f {row.label} (#{row.id}) had already run ({how}) when this message was "
                              "answered again after a restart: it was not run again.",
                              role=row.role, name=name, emoji=emoji)
        return work.reply(f"\u26a0\ufe0f {row.label} (#{row.id}) was allowed and started, but how it ended is not "
                          "known (no answer in time, its answer cancelled, or Sabha stopped): it may already have "
                          "run, so it was not run again. Check whether it took effect.",
                          role=row.role, name=name, emoji=emoji)


def _said(row: ApprovalRow) -> str:
    return {Answer.ALLOWED_ONCE: "allowed", Answer.ALWAYS_ALLOWED: "allowed", Answer.DENIED: "denied",
            Answer.TIMED_OUT: "not answered in time (the advisor answered without it)"}.get(row.answer or "",
                                                                                            "answered")


def _decided_text(row: ApprovalRow) -> str:
    if row.answer == Answer.DENIED:
        return f"Denied: {row.label} (#{row.id}) will not run; the advisor answers without it."
    if row.answer == Answer.ALWAYS_ALLOWED:
        return (f"Allowed: {row.label} (#{row.id}) runs now, and from now on without asking "
                f"(`sabha tools deny {row.label}` asks again).")
    return f"Allowed once: {row.label} (#{row.id}) runs now."
