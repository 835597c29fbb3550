"""Ratifying decisions in chat: ``/ratify [id]``, ``/veto [id] [reason]``, ``/revisit [id] <reason>`` (the
owner's), ``/decisions`` and ``/decision [id]``.

Without an id a ruling concerns the latest *proposed* decision of meetings called from the same
place (chat); ``/decision`` without one shows the latest decision there. The buttons under a
decision message send the same commands with the id (:func:`decision_buttons`), so a press is
answered by exactly these words: a second press says it is already done, a press for a meeting
that no longer exists says so, and Revisit by button asks for the reason. A revisit convenes a
follow-up meeting in the place of the original one with the owner's reason on its agenda (see
:class:`FollowUps`). The verdicts themselves are :class:`board.decisions.ratify.DecisionBook`'s.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from board.commands.host import CommandHost
from board.decisions.ratify import DecisionBook, DecisionRecord, Outcome, Ruling, RulingResult, Verdict
from board.envelope import Button, Envelope
from board.routing.router import Route

__all__ = ["FollowUps", "decision_buttons", "describe", "register", "settled_buttons", "status_lines",
           "verdict_label"]

log = logging.getLogger("sabha.decisions")

#: Plan the meeting that revisits a decision: (the decision, the reason, the owner's envelope) ->
#: a line saying what happens (:meth:`board.room.followup.FollowUps.plan`).
FollowUps = Callable[[DecisionRecord, str, Envelope], Awaitable[str]]

_MARK = {Verdict.PROPOSED: "⏳", Verdict.RATIFIED: "✅", Verdict.VETOED: "⛔", Verdict.REVISIT: "🔁"}
_PAST = {Verdict.RATIFIED: "ratified", Verdict.VETOED: "vetoed", Verdict.REVISIT: "sent back for a revisit"}
_VERB = {Verdict.RATIFIED: "ratify", Verdict.VETOED: "veto", Verdict.REVISIT: "revisit"}


def decision_buttons(meeting_id: str) -> tuple[Button, ...]:
    """Ratify / Veto / Revisit under the decision of ``meeting_id`` (each sends its command)."""
    return (Button("Ratify", f"/ratify {meeting_id}"), Button("Veto", f"/veto {meeting_id}"),
            Button("Revisit", f"/revisit {meeting_id}"))


def settled_buttons(record: DecisionRecord) -> tuple[Button, ...]:
    """What a decision message's buttons become once it is ruled on: one button saying the verdict
    (a press shows the decision: ``/decision <id>``); still the three while it is proposed."""
    if record.verdict is Verdict.PROPOSED:
        return decision_buttons(record.meeting_id)
    label = {Verdict.RATIFIED: "Ratified", Verdict.VETOED: "Vetoed", Verdict.REVISIT: "Sent back"}[record.verdict]
    return (Button(f"{_MARK[record.verdict]} {label}", f"/decision {record.meeting_id}"),)


async def status_lines(book: DecisionBook) -> list[str]:
    """``/status``: how many decisions stand where, and the latest still waiting for the owner."""
    counts = await book.counts()
    if not counts:
        return ["Decisions: none yet"]
    parts = [f"{counts[v]} {v.value}" for v in Verdict if counts.get(v)]
    lines = [f"Decisions: {', '.join(parts)}"]
    waiting = await book.latest(None)
    if waiting is not None:
        lines.append(f"  waiting for the owner: {waiting.meeting_id} \u201c{waiting.topic}\u201d (/ratify, /veto or "
                     "/revisit it)")
    return lines


def verdict_label(verdict: Verdict) -> str:
    """``✅ ratified`` and the like."""
    return f"{_MARK[verdict]} {verdict.value}"


def _who(record: DecisionRecord) -> str:
    name = record.ruled_by_name or record.ruled_by or "someone"
    when = (record.ruled_at or "").replace("T", " ").removesuffix("+00:00")
    return f"by {name}" + (f" at {when} UTC" if when else "")


def describe(record: DecisionRecord) -> str:
    """One decision in a few lines: id, topic, recommendation, verdict and who ruled when."""
    lines = [f"{record.meeting_id} \u201c{record.topic}\u201d: {verdict_label(record.verdict)}"
             + (f" {_who(record)}" if record.verdict is not Verdict.PROPOSED else ""),
             f"Recommendation: {record.recommendation}"]
    if record.reason:
        lines.append(f"Reason: {record.reason}")
    if record.follow_up_id:
        lines.append(f"Follow-up meeting: {record.follow_up_id}")
    if record.revisit_of:
        lines.append(f"Revisits: {record.revisit_of}")
    return "\n".join(lines)


@dataclass(frozen=True)
class _Asked:
    """A ruling command's words: the decision it names (None: the latest proposed here) and the rest."""

    ref: str | None
    rest: str


def _split(text: str) -> _Asked:
    """``m-2026... the reason`` -> (``m-2026...``, ``the reason``); a first word that is no meeting id
    is part of the reason."""
    words = text.strip().split(maxsplit=1)
    if words and words[0].lower().startswith("m-"):
        return _Asked(words[0], words[1].strip() if len(words) > 1 else "")
    return _Asked(None, text.strip())


def _place(envelope: Envelope) -> tuple[str, str, int | None]:
    """Where a command without an id looks for "the latest decision": this chat's topic."""
    return (envelope.channel, envelope.chat_id, envelope.thread_id)


def _problem(result: RulingResult, ref: str | None, verb: str) -> str | None:
    """What to say when the ruling could not even be tried (no such decision); None when it could."""
    if result.outcome is Outcome.NOT_FOUND:
        return (f"There is no meeting {ref!r} (it may have been removed), so there is nothing to {verb}; "
                "/decisions lists the decisions.")
    if result.outcome is Outcome.AMBIGUOUS:
        return f"{ref!r} names several meetings ({', '.join(result.candidates)}); give more of the id."
    if result.outcome is Outcome.NO_DECISION and result.record is not None:
        return (f"Meeting {result.record.meeting_id} \u201c{result.record.topic}\u201d reached no decision, so there "
                f"is nothing to {verb}.")
    return None


@dataclass(frozen=True)
class _Commands:
    """The decision commands over one :class:`DecisionBook`."""

    book: DecisionBook
    follow_ups: FollowUps

    async def target(self, envelope: Envelope, asked: _Asked, verb: str) -> DecisionRecord | str:
        """The decision a ruling names (the latest proposed here without an id), or what to say."""
        if asked.ref is None:
            record = await self.book.latest(_place(envelope))
            if record is None:
                return f"No proposed decision from a meeting here to {verb}; /decisions lists them, or give its id."
            return record
        found = await self.book.find(asked.ref)
        problem = _problem(found, asked.ref, verb)
        if problem is not None or found.record is None:
            return problem or f"No decision {asked.ref!r}."
        return found.record

    async def rule(self, envelope: Envelope, verdict: Verdict, asked: _Asked, reason: str | None) -> str:
        """Ask the book for ``verdict``; the answer in words."""
        record = await self.target(envelope, asked, _VERB[verdict])
        if isinstance(record, str):
            return record
        ruling = Ruling(verdict, by=f"{envelope.channel}:{envelope.sender}", via=envelope.channel,
                        by_name=envelope.sender_name or envelope.sender, reason=reason or None)
        result = await self.book.rule(record.meeting_id, ruling)
        problem = _problem(result, record.meeting_id, _VERB[verdict])
        if problem is not None:
            return problem
        now = result.record or record
        if result.outcome is Outcome.ALREADY:
            return (f"Decision {now.meeting_id} is already {_PAST[verdict]} ({_who(now)}); nothing changed."
                    + (f" Its follow-up meeting is {now.follow_up_id}." if now.follow_up_id else ""))
        if result.outcome is Outcome.FINAL:
            return (f"Decision {now.meeting_id} was {_PAST.get(now.verdict, now.verdict.value)} ({_who(now)}), so it "
                    f"cannot be {_PAST[verdict]} now; nothing changed."
                    + (f" Its follow-up meeting is {now.follow_up_id}." if now.follow_up_id else ""))
        return await self.done(now, verdict, result.dropped, reason, envelope)

    async def done(self, record: DecisionRecord, verdict: Verdict, dropped: tuple[int, ...], reason: str | None,
                   envelope: Envelope) -> str:
        """What a ruling that changed the verdict says (and, for a revisit, the follow-up planned)."""
        head = (f"{_MARK[verdict]} Decision {record.meeting_id} \u201c{record.topic}\u201d {_PAST[verdict]} "
                f"{_who(record)}.")
        if verdict is Verdict.RATIFIED:
            return f"{head}\nRecommendation: {record.recommendation}"
        if verdict is Verdict.VETOED:
            actions = (f"Its {len(dropped)} open action item(s) ({', '.join(f'#{i}' for i in dropped)}) are dropped: "
                       "no reminders for them." if dropped else "It had no open action items.")
            return f"{head}{f' Reason: {reason}.' if reason else ''}\n{actions}"
        return f"{head} Reason: {reason}.\n" + await self.follow_ups(record, reason or "", envelope)

    async def ratify(self, envelope: Envelope, route: Route) -> str:
        asked = _split(route.text)
        return await self.rule(envelope, Verdict.RATIFIED, _Asked(asked.ref, ""), None)

    async def veto(self, envelope: Envelope, route: Route) -> str:
        asked = _split(route.text)
        return await self.rule(envelope, Verdict.VETOED, asked, asked.rest)

    async def revisit(self, envelope: Envelope, route: Route) -> str:
        asked = _split(route.text)
        if asked.rest:
            return await self.rule(envelope, Verdict.REVISIT, asked, asked.rest)
        record = await self.target(envelope, asked, "revisit")
        if isinstance(record, str):
            return record
        if record.verdict in (Verdict.VETOED, Verdict.REVISIT):
            return f"Decision {record.meeting_id} was {_PAST[record.verdict]} ({_who(record)}); nothing changed."
        return (f"Say why the board should revisit decision {record.meeting_id} \u201c{record.topic}\u201d: reply "
                f"/revisit {record.meeting_id} <reason>. The reason goes on the follow-up meeting's agenda.")

    async def decisions(self, envelope: Envelope, route: Route) -> str:
        place = None if envelope.is_owner else _place(envelope)
        wanted = route.text.strip().lower()
        verdict = Verdict(wanted) if wanted in set(Verdict) else None
        if wanted and verdict is None:
            return f"/decisions [{'|'.join(v.value for v in Verdict)}]: which decisions to list."
        rows = await self.book.recent(place=place, verdict=verdict, limit=10)
        if not rows:
            return ("No decisions yet" + (f" that are {wanted}" if wanted else "")
                    + ". Meetings make them: /meeting <topic>.")
        lines = [f"Decisions ({len(rows)}, newest first); rule on one with /ratify, /veto or /revisit <id>:"]
        lines += [f"{verdict_label(r.verdict)} · {r.meeting_id} \u201c{r.topic}\u201d: {r.recommendation}"
                  for r in rows]
        return "\n".join(lines)

    async def decision(self, envelope: Envelope, route: Route) -> str:
        ref = route.text.strip().split(maxsplit=1)[0] if route.text.strip() else None
        if ref is None:
            rows = await self.book.recent(place=_place(envelope), limit=1)
            return describe(rows[0]) if rows else "No decision from a meeting here yet; /decisions lists them."
        found = await self.book.find(ref)
        problem = _problem(found, ref, "show")
        if problem is not None or found.record is None:
            return problem or f"No decision {ref!r}."
        if not envelope.is_owner and found.record.place != _place(envelope)[:2]:
            return f"There is no meeting {ref!r} here; /decisions lists the decisions of this chat."
        return describe(found.record)


def register(host: CommandHost, book: DecisionBook, follow_ups: FollowUps) -> None:
    """Add the decision commands to ``host`` (rulings owner-only)."""
    c = _Commands(book, follow_ups)
    host.register_command("ratify", c.ratify, "/ratify [id]: ratify a board decision (the latest proposed here)",
                          owner_only=True)
    host.register_command("veto", c.veto, "/veto [id] [reason]: veto a board decision; its action items are dropped",
                          owner_only=True)
    host.register_command("revisit", c.revisit, "/revisit [id] <reason>: send a decision back to a follow-up meeting",
                          owner_only=True)
    host.register_command("decisions", c.decisions, "/decisions [proposed|ratified|vetoed|revisit]: board decisions "
                                                    "and where they stand")
    host.register_command("decision", c.decision, "/decision [id]: one decision, who ruled on it and when")
