"""What the board's MCP tools do, over the board's own services: :class:`BoardDesk`.

Each method is one tool of :mod:`bot.mcp_server.server`, done the way the rest of Sabha does it, never a
second implementation: ``ask_advisor`` is ``sabha ask`` (the front door, :func:`board.answer.answer`, with
a route to the role; same ledger, same budget), ``convene_meeting`` is ``sabha meeting``
(:meth:`board.room.convene.BoardRoom.prepare` run to its decision), ``list_decisions`` is ``sabha decisions
list`` (:class:`board.decisions.ratify.DecisionBook`) and ``list_action_items`` is ``sabha actions`` (the
meeting store and :class:`board.decisions.reminders.Reminders`' wording). A client acts as the owner.

A client's questions go to sessions of their own, ``board:<role>:mcp-<client>`` (the client's name from its
MCP handshake), so an agent's conversation with an advisor never mixes into the owner's own chat with it.
A problem the client can fix (an unknown role, a blank question, a member not on the board) is a
:class:`DeskProblem` whose text says what to do; the server turns it into an MCP tool error.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from board.envelope import Envelope, cleaned
from board.roles import GENERAL
from board.spending.budget import sender_id

if TYPE_CHECKING:
    from board.answer import Door
    from board.app import Parts
    from board.clock import Clock
    from board.decisions.ratify import DecisionBook, DecisionRecord
    from board.decisions.reminders import Reminders
    from board.room.convene import BoardRoom
    from board.room.meeting import MeetingEvent
    from board.routing.router import Router
    from board.workspace.souls import AgentProfile, SoulStore

__all__ = ["MCP_CHANNEL", "BoardDesk", "DeskProblem", "McpBoardParts", "Progress", "client_slug"]

log = logging.getLogger("sabha.mcp")

#: The channel name of what an MCP client asks (envelopes, replies, the ledger's sessions).
MCP_CHANNEL = "mcp"
#: At most this many decisions / action items in one listing.
MAX_LISTED = 200
_SLUG = re.compile(r"[^a-z0-9_.-]+")

#: Told of a meeting's progress while it runs: (steps done, steps expected, what just happened).
Progress = Callable[[float, float | None, str], Awaitable[None]]


class DeskProblem(Exception):
    """A request the client can fix; the text says how (an MCP tool error)."""


def client_slug(name: str | None) -> str:
    """The client's name as it appears in session keys: lowercase, ``[a-z0-9_.-]``, at most 40 characters
    (``Claude Desktop`` -> ``claude-desktop``; none given -> ``client``)."""
    slug = _SLUG.sub("-", (name or "").strip().lower()).strip("-.")[:40]
    return slug or "client"


@dataclass(frozen=True, kw_only=True)
class McpBoardParts:
    """The board's parts the MCP tools use, taken once from the board's :class:`~board.app.Parts`."""

    door: Door  # the front door an advisor's answer goes through (as sabha ask's)
    router: Callable[[], Router]
    souls: SoulStore
    room: BoardRoom  # meetings: held, and the meeting store (action items)
    decisions: DecisionBook
    reminders: Reminders  # who owes an action item, in the board's words; its time zone
    clock: Clock
    roster: str  # the board's own roster

    @classmethod
    def of(cls, parts: Parts) -> McpBoardParts:
        """The MCP tools' parts of the board whose parts are ``parts`` (the one place they are taken)."""
        return cls(door=parts.door, router=parts.router, souls=parts.souls, room=parts.room,
                   decisions=parts.decisions, reminders=parts.reminders, clock=parts.clock,
                   roster=parts.settings.roster.name)


def _about(profile: AgentProfile) -> str:
    """What an advisor is for: its title and the first paragraph of its soul, cut at 300 characters."""
    paragraphs = [p.strip() for p in profile.soul.text.split("\n\n") if p.strip() and not p.strip().startswith("#")]
    first = " ".join(paragraphs[0].split()) if paragraphs else ""
    return first if len(first) <= 300 else first[:297].rstrip() + "..."


@dataclass(frozen=True)
class BoardDesk:
    """The board's MCP tools' work (see the module docstring)."""

    parts: McpBoardParts

    # -- list_advisors -------------------------------------------------------------------

    def advisors(self) -> dict[str, Any]:
        """Every advisor of the board: role (what ``ask_advisor`` takes), name, title, what each is for."""
        return {"roster": self.parts.roster, "advisors": [
            {"role": p.role, "name": p.name, "title": p.title, "emoji": p.emoji, "chair": p.role == GENERAL,
             "about": _about(p)} for p in self.parts.souls.profiles()]}

    def _role(self, router: Router, name: str) -> str:
        found = router.find_role(name) if name.strip() else None
        if found is None:  # a title names a role too (CFO)
            wanted = name.strip().lower()
            titled = [p.role for p in self.parts.souls.profiles() if p.title and p.title.lower() == wanted]
            found = titled[0] if len(titled) == 1 and titled[0] in router.roles else None
        if found is None:
            roles = ", ".join(router.roles)
            raise DeskProblem(f"there is no advisor {name.strip()!r} on this board; give one of these roles: "
                              f"{roles} (list_advisors says what each is for)")
        return found

    # -- ask_advisor ---------------------------------------------------------------------

    async def ask(self, role: str, question: str, client: str) -> dict[str, Any]:
        """``role``'s answer to ``question``, asked as the owner in the client's own session with that role; a
        :class:`DeskProblem` when it is an error or degraded (no model could answer: the text says why)."""
        from board.answer import answer
        from board.routing.router import Route

        if not question.strip():
            raise DeskProblem("the question is empty: give the advisor something to answer")
        router = self.parts.router()
        slug = self._role(router, role)
        who = client_slug(client)
        key = f"board:{slug}:{MCP_CHANNEL}-{who}"
        envelope = cleaned(Envelope(channel=MCP_CHANNEL, chat_id=f"{MCP_CHANNEL}-{who}", text=question.strip(),
                                    sender=f"{MCP_CHANNEL}:{who}", sender_name=f"{client or who} (MCP client)",
                                    is_owner=True, role_hint=slug))
        route = Route("chat", slug, envelope.text, key, reason=f"MCP ask_advisor({slug})")
        log.info("mcp: %s asks %s (session %s)", who, slug, key)
        reply = await answer(envelope, self.parts.door, route=route, received_clean=True)
        if reply.kind == "error" or reply.degraded:  # sabha ask's exit code 1: no real answer, the text says why
            raise DeskProblem(f"{slug} could not answer: {reply.text}")
        return {"role": reply.role, "name": reply.name, "answer": reply.render(), "text": reply.text,
                "session": reply.session_key or key, "kind": reply.kind, "degraded": reply.degraded}

    # -- convene_meeting -----------------------------------------------------------------

    def _members(self, members: Sequence[str] | None, specialists: Sequence[AgentProfile]) -> list[AgentProfile]:
        """The specialists ``members`` names (by role or name, any case), in the board's order; all when None."""
        if not members:
            return list(specialists)
        router = self.parts.router()
        by_role = {p.role: p for p in specialists}
        wanted: set[str] = set()
        for name in members:
            slug = self._role(router, name)
            if slug not in by_role:
                raise DeskProblem(f"{slug} cannot sit in a meeting as a member (the chair chairs it; members are "
                                  f"the specialists: {', '.join(by_role)})")
            wanted.add(slug)
        return [p for p in specialists if p.role in wanted]

    async def convene(self, topic: str, members: Sequence[str] | None, client: str,
                      progress: Progress | None = None) -> dict[str, Any]:
        """Hold a board meeting on ``topic`` (with ``members`` only, when given) to its end; its decision. The
        day's budget is asked first, as for ``/meeting`` in a chat (a meeting's own cap is its settings')."""
        who = client_slug(client)
        envelope = Envelope(channel=MCP_CHANNEL, chat_id=f"{MCP_CHANNEL}-{who}", text="",
                            sender=f"{MCP_CHANNEL}:{who}", sender_name=f"{client or who} (MCP client)", is_owner=True)
        stop = await self.parts.door.budget.check(sender_id(envelope), is_owner=True)  # as /meeting in a chat
        if stop is not None:
            raise DeskProblem(stop.text)
        await self._affordable()
        subscribers = [] if progress is None else [_progress_of(progress)]
        try:
            run = self.parts.room.prepare(topic, envelope=envelope, extra_subscribers=subscribers)
        except ValueError as exc:  # meetings off, a blank topic, a roster without specialists
            raise DeskProblem(str(exc)) from exc
        chosen = self._members(members, run.specialists)
        if len(chosen) != len(run.specialists):
            run.m = replace(run.m, specialists=chosen)
        log.info("mcp: %s convenes meeting %s on %r (%s)", who, run.id, run.topic,
                 ", ".join(p.role for p in chosen))
        result = await run.run()
        details = await self.parts.room.store.details(result.meeting_id)
        return {
            "meeting_id": result.meeting_id, "topic": result.topic, "outcome": result.stop_reason.value,
            "members": [p.role for p in chosen], "rounds": result.rounds, "cost_usd": round(result.cost_usd, 6),
            "decision": result.decision.model_dump(mode="json") if result.decision is not None else None,
            "stances": _stances(details), "absent": dict(result.absent), "error": result.error,
            "minutes": result.minutes,
        }

    async def _affordable(self) -> None:
        """A meeting expected to cost more than ``board.meetings.confirm_over_usd`` begins only with the owner's
        Start (:mod:`board.room.pending`), which a client cannot press: :class:`DeskProblem` with the estimate."""
        room = self.parts.room
        threshold = room.meeting_settings.confirm_over_usd
        estimate = await room.estimate()
        if estimate.needs_start(threshold):
            raise DeskProblem(f"{estimate.summary()} That is above board.meetings.confirm_over_usd (${threshold:g}): "
                              "only the owner starts such a meeting (/meeting in a chat, then Start; or sabha "
                              "meeting --yes). Nothing was spent.")

    # -- list_decisions / list_action_items ------------------------------------------------

    async def decisions(self, status: str | None, limit: int) -> dict[str, Any]:
        """Recent decisions, newest first, with where each stands (``status``: only those)."""
        from board.decisions.ratify import Verdict

        verdict = None
        if status:
            try:
                verdict = Verdict(status.strip().lower())
            except ValueError:
                raise DeskProblem(f"status {status!r} is not one of {', '.join(v.value for v in Verdict)}; leave it "
                                  "out for every decision") from None
        rows = await self.parts.decisions.recent(verdict=verdict, limit=max(1, min(limit, MAX_LISTED)))
        return {"decisions": [_decision(r) for r in rows]}

    async def action_items(self, open_only: bool, limit: int) -> dict[str, Any]:
        """Action items of recorded decisions (the open ones unless ``open_only`` is False), as ``sabha actions``
        lists them: who owes each, when it is due."""
        reminders = self.parts.reminders
        rows = await self.parts.room.store.actions(include_done=not open_only, limit=max(1, min(limit, MAX_LISTED)))
        return {"action_items": [
            {"id": r.id, "task": r.task, "owner": r.owner, "owed_by": reminders.who(r.owner), "status": r.status,
             "due_at": r.due_at, "due": r.due_text, "meeting_id": r.meeting_id, "topic": r.topic,
             "created_at": r.created_at, "done_at": r.done_at} for r in rows]}


def _decision(record: DecisionRecord) -> dict[str, Any]:
    return {"meeting_id": record.meeting_id, "topic": record.topic, "recommendation": record.recommendation,
            "status": record.verdict.value, "meeting_started_at": record.started_at,
            "ruled_by": record.ruled_by_name or record.ruled_by, "ruled_at": record.ruled_at, "reason": record.reason,
            "follow_up_id": record.follow_up_id, "revisit_of": record.revisit_of, "action_items": list(record.actions)}


def _stances(details: dict[str, Any]) -> dict[str, Any]:
    """Each member's last stance in the meeting (position, confidence, assumption), by role."""
    stances: dict[str, Any] = {}
    for statement in details.get("statements", []):
        if statement.get("stance"):
            stances[str(statement["role"])] = statement["stance"]
    return stances


def _progress_of(progress: Progress) -> Callable[[MeetingEvent], Awaitable[None]]:
    """A meeting subscriber that tells ``progress`` of each step (a statement, a round, the decision)."""
    from board.room.meeting import MeetingEventKind

    told = {MeetingEventKind.FRAMED: "the chair framed the agenda", MeetingEventKind.ROUND_DONE: "round done",
            MeetingEventKind.DECISION: "the chair recorded the decision"}
    steps = 0

    async def tell(event: MeetingEvent) -> None:
        nonlocal steps
        if event.kind is MeetingEventKind.AGENT_SPOKE:
            what = f"{event.name or event.role} spoke" + (f" (round {event.round})" if event.round else "")
        elif event.kind in told:
            what = told[event.kind] + (f" {event.round}" if event.kind is MeetingEventKind.ROUND_DONE else "")
        else:
            return
        steps += 1
        try:
            await progress(steps, None, what)
        except Exception:
            log.debug("mcp: progress notification failed", exc_info=True)

    return tell
