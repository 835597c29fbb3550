"""Board meetings: the chair frames, specialists speak in rounds, the chair decides.

Flow: the chair frames an agenda and a question per specialist; round 1, every
specialist answers independently (in parallel by default); rounds 2..N, each sees the
others' statements (abridged when long) and must answer named points, logging
disagreements and consensus with the ``log_disagreement`` / ``log_consensus`` tools;
the chair stops early when positions have converged; then a validated, structured
decision (see :mod:`board.room.decision`).

Limits come from :class:`MeetingSettings`: turns per agent, wall-clock duration and a
budget in USD checked before every model call. A specialist that fails or times out is
recorded absent and the meeting goes on while a quorum is present. Every meeting ends
with a ``stop_reason``: completed, converged, budget, deadline, cancelled or error.
Progress is published as :class:`MeetingEvent` objects to any subscriber.
"""

from __future__ import annotations

import asyncio
import logging
import math
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from board.agent.speaker import Ask, Speaker, Utterance
from board.agent.tools import Tool, ToolContext, ToolResult
from board.envelope import Envelope
from board.llm.base import ToolSpec
from board.room.decision import (
    ActionItem,
    Decision,
    DecisionProblem,
    Dissent,
    decision_schema,
    extract_json,
    validate_decision,
)
from board.room.store import MeetingStore
from board.workspace.souls import AgentProfile

__all__ = [
    "MeetingEvent",
    "MeetingEventKind",
    "MeetingResult",
    "MeetingRun",
    "MeetingSettings",
    "StopReason",
    "Subscriber",
    "abridge",
    "meeting_tools",
    "new_meeting_id",
]

log = logging.getLogger("sabha.meeting")


class StopReason(StrEnum):
    """Why a meeting ended."""

    COMPLETED = "completed"
    CONVERGED = "converged"
    BUDGET = "budget"
    DEADLINE = "deadline"
    CANCELLED = "cancelled"
    ERROR = "error"


@dataclass(frozen=True)
class MeetingSettings:
    """Limits of one meeting (config ``board.meetings``)."""

    max_turns_per_agent: int = 3
    max_duration_s: float = 600.0
    budget_usd: float = 1.0
    parallel: bool = True
    agent_timeout_s: float = 120.0
    abridge_chars: int = 900
    quorum: float = 0.5
    critic_role: str = "critic"


class MeetingEventKind(StrEnum):
    """What a :class:`MeetingEvent` reports."""

    STARTED = "started"
    FRAMED = "framed"
    AGENT_SPOKE = "agent_spoke"
    ABSENT = "absent"
    DISAGREEMENT = "disagreement"
    CONSENSUS = "consensus"
    ROUND_DONE = "round_done"
    DECISION = "decision"
    ENDED = "ended"


@dataclass(frozen=True)
class MeetingEvent:
    """A progress event channels can show."""

    kind: MeetingEventKind
    meeting_id: str
    topic: str
    origin: Envelope | None = None
    round: int | None = None
    role: str | None = None
    name: str | None = None
    emoji: str | None = None
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)


Subscriber = Callable[[MeetingEvent], Awaitable[None]]


@dataclass(frozen=True)
class MeetingResult:
    """The outcome: the decision (None only when the meeting could not reach one),
    the stop reason, the minutes and what it cost."""

    meeting_id: str
    topic: str
    stop_reason: StopReason
    decision: Decision | None
    minutes: str
    cost_usd: float
    rounds: int
    absent: dict[str, str]
    error: str | None = None


class _Stop(Exception):
    def __init__(self, reason: StopReason, detail: str = "") -> None:
        super().__init__(detail or reason.value)
        self.reason = reason
        self.detail = detail


def new_meeting_id() -> str:
    """A sortable, unique meeting id such as ``m-20261122-0304-9f2c``."""
    return f"m-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def abridge(text: str, limit: int) -> str:
    """Shorten ``text`` to about ``limit`` characters at a sentence boundary."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit]
    end = max(cut.rfind(". "), cut.rfind("? "), cut.rfind("! "))
    if end > limit // 2:
        cut = cut[: end + 1]
    return cut.rstrip() + " (abridged)"


def _without_role(event: dict[str, Any]) -> dict[str, Any]:
    """An event's data without the keys :meth:`MeetingRun._emit` takes by name (``role``, ``text``):
    passing them twice raised after the row was stored, and the model was told its call failed."""
    return {k: v for k, v in event.items() if k not in ("role", "text")}


def meeting_tools(run: MeetingRun) -> list[Tool]:
    """The two scoreboard tools of seed 000; they record into ``run``."""

    async def disagree(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await run.record_disagreement(ctx.role, args)

    async def consensus(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await run.record_consensus(ctx.role, args)

    return [
        Tool(
            ToolSpec(
                name="log_disagreement",
                description="Log a formal disagreement with another participant. Use this when you fundamentally "
                "oppose a point.",
                parameters={
                    "type": "object",
                    "properties": {
                        "target_participant_name": {
                            "type": "string", "minLength": 1,
                            "description": "Name or role of the participant you disagree with."},
                        "topic": {"type": "string", "minLength": 1, "description": "The conflict in at most 5 words."},
                        "reasoning": {"type": "string", "minLength": 1, "description": "Why you disagree."},
                        "severity": {"type": "integer", "minimum": 1, "maximum": 5,
                                     "description": "1 (minor nitpick) to 5 (critical blocker)."},
                    },
                    "required": ["target_participant_name", "topic", "reasoning", "severity"],
                    "additionalProperties": False,
                },
            ),
            disagree,
            timeout_s=10,
        ),
        Tool(
            ToolSpec(
                name="log_consensus",
                description="Log a point where several participants have reached alignment.",
                parameters={
                    "type": "object",
                    "properties": {
                        "participants": {"type": "array", "items": {"type": "string"}, "minItems": 2,
                                         "description": "Names or roles of those who agree."},
                        "topic": {"type": "string", "minLength": 1, "description": "What was agreed."},
                        "strength": {"type": "integer", "minimum": 1, "maximum": 5,
                                     "description": "1 (tentative) to 5 (unanimous)."},
                    },
                    "required": ["participants", "topic", "strength"],
                    "additionalProperties": False,
                },
            ),
            consensus,
            timeout_s=10,
        ),
    ]


@dataclass(kw_only=True, eq=False)
class MeetingRun:
    """One meeting in progress. Create with :meth:`Meeting.start`, then ``await run.run()``."""

    id: str
    topic: str
    roster: str
    chair: AgentProfile
    specialists: list[AgentProfile]
    speak: Speaker
    store: MeetingStore
    settings: MeetingSettings
    render_minutes: Callable[[dict[str, Any]], str]
    subscribers: list[Subscriber]
    base_ctx: ToolContext
    resolve_role: Callable[[str], str | None]
    agenda: str = field(default="", init=False)
    questions: dict[str, str] = field(default_factory=dict, init=False)
    rounds: list[dict[str, str]] = field(default_factory=list, init=False)
    absent: dict[str, str] = field(default_factory=dict, init=False)
    disagreements: list[dict[str, Any]] = field(default_factory=list, init=False)
    consensus: list[dict[str, Any]] = field(default_factory=list, init=False)
    spent_usd: float = field(default=0.0, init=False)
    current_round: int = field(default=0, init=False)
    preset_agenda: str | None = field(default=None, init=False)
    warnings: list[str] = field(default_factory=list, init=False)  # shown in the minutes, e.g. an unenforced budget
    _deadline: float = field(default=0.0, init=False)
    _started_at: str = field(default="", init=False)
    _tools: list[Tool] = field(init=False)

    def __post_init__(self) -> None:
        self._tools = meeting_tools(self)

    # -- helpers -----------------------------------------------------------------

    @property
    def profiles(self) -> dict[str, AgentProfile]:
        """Everyone in the room by role."""
        return {p.role: p for p in [self.chair, *self.specialists]}

    def present(self) -> list[AgentProfile]:
        """Specialists still in the meeting."""
        return [p for p in self.specialists if p.role not in self.absent]

    async def _emit(self, kind: MeetingEventKind, *, role: str | None = None, text: str = "", **data: Any) -> None:
        profile = self.profiles.get(role) if role else None
        event = MeetingEvent(
            kind=kind, meeting_id=self.id, topic=self.topic, origin=self.base_ctx.envelope,
            round=self.current_round or None, role=role,
            name=profile.name if profile else None, emoji=profile.emoji if profile else None, text=text, data=data,
        )
        for subscriber in list(self.subscribers):
            try:
                await subscriber(event)
            except Exception:  # a broken display must not break the meeting
                log.exception("meeting %s: subscriber failed on %s", self.id, kind)

    def _remaining(self) -> float:
        return self._deadline - time.monotonic()

    def over_budget(self, pending_usd: float = 0.0) -> str | None:
        """Why no further model call may start (``pending_usd``: spent by the exchange in progress)."""
        spent = self.spent_usd + pending_usd
        if spent >= self.settings.budget_usd:
            return f"spent ${spent:.4f} of the ${self.settings.budget_usd:.4f} meeting budget"
        return None

    def spend(self, usd: float) -> None:
        """Cost made inside an exchange that its own cost does not include (consultations)."""
        self.spent_usd += usd

    def _check_limits(self) -> None:
        if self._remaining() <= 0:
            raise _Stop(StopReason.DEADLINE, f"the meeting reached its {self.settings.max_duration_s:g} s limit")
        if (reason := self.over_budget()) is not None:
            raise _Stop(StopReason.BUDGET, reason)

    async def _call(self, role: str, message: str, *, tools: tuple[str, ...] | None = (),
                    extra_tools: list[Tool] | None = None, schema: dict[str, Any] | None = None,
                    timeout: float | None = None) -> Utterance:
        """One model call for ``role``, inside the budget and the deadline."""
        self._check_limits()
        limit = self._remaining() if timeout is None else min(timeout, self._remaining())
        ctx = ToolContext(
            role=role,
            session_key=f"meeting:{self.id}:{role}",
            envelope=self.base_ctx.envelope,
            depth=0 if role == self.chair.role else 1,
            chain=(self.chair.role,) if role == self.chair.role else (self.chair.role, role),
            meeting_id=self.id,
            deadline=asyncio.get_running_loop().time() + limit,
            budget=self,
            roster=self.roster,
            consult_cache={},
        )
        try:
            utterance = await asyncio.wait_for(
                self.speak(Ask(role, message, tools=tools, extra_tools=tuple(extra_tools or ()),
                                response_schema=schema), ctx), timeout=max(limit, 0.001)
            )
        except TimeoutError:
            if self._remaining() <= 0.01:
                raise _Stop(StopReason.DEADLINE,
                            f"the meeting reached its {self.settings.max_duration_s:g} s limit") from None
            raise
        self.spent_usd += utterance.cost_usd
        return utterance

    # -- scoreboard tools --------------------------------------------------------

    async def record_disagreement(self, role: str, args: dict[str, Any]) -> ToolResult:
        """Called by the log_disagreement tool."""
        target_text = str(args["target_participant_name"])
        target = self.resolve_role(target_text) or target_text
        topic = " ".join(str(args["topic"]).split()[:5])
        event = {"role": role, "target": target, "topic": topic, "reasoning": str(args["reasoning"]),
                 "severity": int(args["severity"]), "round": self.current_round}
        self.disagreements.append(event)
        await self.store.event(self.id, "disagreement", role, event, self.current_round)
        await self._emit(MeetingEventKind.DISAGREEMENT, role=role, text=f"disagrees with {target} on {topic}",
                         **_without_role(event))
        return ToolResult.success({"logged": "disagreement", "topic": topic})

    async def record_consensus(self, role: str, args: dict[str, Any]) -> ToolResult:
        """Called by the log_consensus tool."""
        participants = [self.resolve_role(str(p)) or str(p) for p in args["participants"]]
        event = {"role": role, "participants": participants, "topic": str(args["topic"]),
                 "strength": int(args["strength"]), "round": self.current_round}
        self.consensus.append(event)
        await self.store.event(self.id, "consensus", role, event, self.current_round)
        await self._emit(MeetingEventKind.CONSENSUS, role=role, text=f"consensus on {event['topic']}",
                         **_without_role(event))
        return ToolResult.success({"logged": "consensus", "topic": event["topic"]})

    # -- phases ------------------------------------------------------------------

    async def _frame(self) -> None:
        roles = [p.role for p in self.specialists]
        schema = {
            "type": "object",
            "required": ["agenda", "questions"],
            "properties": {
                "agenda": {"type": "string", "minLength": 3},
                "questions": {"type": "object", "required": roles,
                              "properties": {r: {"type": "string", "minLength": 3} for r in roles}},
            },
        }
        roster_lines = "\n".join(f"- {p.role}: {p.name}{', ' + p.title if p.title else ''}" for p in self.specialists)
        message = (
            f"You are chairing a board meeting on: {self.topic}\n\n"
            f"Specialists present:\n{roster_lines}\n\n"
            "Frame the meeting: a short agenda (2-4 lines) and one precise question for each specialist, "
            "suited to their expertise. Reply with one JSON object only: "
            '{"agenda": "...", "questions": {"<role>": "..."}}'
        )
        default_questions = {
            p.role: f"From your seat as {p.name}{' (' + p.title + ')' if p.title else ''}: what should the board "
                    f"decide about \"{self.topic}\", and what is the one thing we must not get wrong?"
            for p in self.specialists
        }
        agenda = f"Decide: {self.topic}"
        if self.preset_agenda is not None:
            self.agenda, self.questions = self.preset_agenda, default_questions
            await self.store.set_agenda(self.id, self.agenda)
            await self._emit(MeetingEventKind.FRAMED, role=self.chair.role, text=self.agenda,
                             questions=default_questions)
            return
        try:
            framed = await self._call(self.chair.role, message, schema=schema, timeout=self.settings.agent_timeout_s)
            data = extract_json(framed.text)
            if isinstance(data, dict):
                if isinstance(data.get("agenda"), str) and data["agenda"].strip():
                    agenda = data["agenda"].strip()
                questions = data.get("questions")
                if isinstance(questions, dict):
                    for role, question in questions.items():
                        if role in default_questions and isinstance(question, str) and question.strip():
                            default_questions[role] = question.strip()
        except (DecisionProblem, TimeoutError) as exc:
            log.warning("meeting %s: chair framing unusable (%s); using default questions", self.id, exc)
        except _Stop:
            raise
        except Exception as exc:  # noqa: BLE001
            log.warning("meeting %s: chair framing failed (%s); using default questions", self.id, exc)
        self.agenda, self.questions = agenda, default_questions
        await self.store.set_agenda(self.id, agenda)
        await self._emit(MeetingEventKind.FRAMED, role=self.chair.role, text=agenda, questions=default_questions)

    def _round_message(self, profile: AgentProfile, round_no: int) -> str:
        max_rounds = self.settings.max_turns_per_agent
        if round_no == 1:
            return (
                f"Board meeting on: {self.topic}\nAgenda:\n{self.agenda}\n\n"
                f"Round 1 of at most {max_rounds}. The chair asks you: {self.questions[profile.role]}\n\n"
                "Answer independently, in your own voice, in under 200 words."
            )
        previous = self.rounds[-1]
        others = "\n\n".join(
            f"{self.profiles[role].name} ({role}): {abridge(text, self.settings.abridge_chars)}"
            for role, text in previous.items() if role != profile.role
        )
        own = previous.get(profile.role, "")
        return (
            f"Board meeting on: {self.topic}\nRound {round_no} of at most {max_rounds}.\n\n"
            f"Your previous statement: {abridge(own, self.settings.abridge_chars)}\n\n"
            f"What your colleagues said last round:\n{others}\n\n"
            "Respond to specific points, naming the colleague you answer. Where you fundamentally disagree, call "
            "log_disagreement; where you see alignment, call log_consensus. If you have nothing new, say so in one "
            "sentence. Under 150 words."
        )

    async def _speak_round(self, round_no: int) -> None:
        self.current_round = round_no
        speakers = self.present()
        statements: dict[str, str] = {}

        async def one(profile: AgentProfile) -> None:
            try:
                utterance = await self._call(profile.role, self._round_message(profile, round_no), tools=None,
                                             extra_tools=self._tools, timeout=self.settings.agent_timeout_s)
            except _Stop:
                raise
            except asyncio.CancelledError:
                raise
            except TimeoutError:
                await self._mark_absent(profile, f"timed out after {self.settings.agent_timeout_s:g} s")
                return
            except Exception as exc:  # noqa: BLE001 - one failing specialist must not end the meeting
                await self._mark_absent(profile, f"failed: {exc}")
                return
            if utterance.degraded:
                await self._mark_absent(profile, "the model was unavailable")
                return
            statements[profile.role] = utterance.text
            await self.store.statement(self.id, round_no, profile.role, utterance.text, model=utterance.model,
                                       cost_usd=utterance.cost_usd)
            await self._emit(MeetingEventKind.AGENT_SPOKE, role=profile.role, text=utterance.text)

        try:
            if self.settings.parallel:
                results = await asyncio.gather(*(one(p) for p in speakers), return_exceptions=True)
                for result in results:
                    if isinstance(result, BaseException):
                        raise result
            else:
                for profile in speakers:
                    await one(profile)
        except BaseException:
            # a round cut short (deadline, budget, cancel) keeps what was said: it is stored,
            # was shown to the channels, and belongs in the minutes
            if statements:
                self.rounds.append({p.role: statements[p.role] for p in self.specialists if p.role in statements})
            raise
        # keep roster order
        self.rounds.append({p.role: statements[p.role] for p in self.specialists if p.role in statements})
        needed = max(1, math.ceil(len(self.specialists) * self.settings.quorum))
        if len(self.present()) < needed:
            raise _Stop(StopReason.ERROR, f"no quorum: {len(self.present())} of {len(self.specialists)} specialists "
                                          f"present, {needed} needed")
        await self._emit(MeetingEventKind.ROUND_DONE, text=f"round {round_no} done", spoke=list(self.rounds[-1]))

    async def _mark_absent(self, profile: AgentProfile, reason: str) -> None:
        log.warning("meeting %s: %s is absent (%s)", self.id, profile.role, reason)
        self.absent[profile.role] = reason
        await self.store.participant(self.id, profile.role, "absent", reason)
        await self._emit(MeetingEventKind.ABSENT, role=profile.role, text=reason)

    def converged(self) -> bool:
        """Positions have converged when the last round logged no serious disagreement (severity >= 3)
        and a strong consensus (strength >= 4)."""
        round_no = self.current_round
        serious = [d for d in self.disagreements if d["round"] == round_no and d["severity"] >= 3]
        strong = [c for c in self.consensus if c["round"] == round_no and c["strength"] >= 4]
        return round_no >= 2 and not serious and bool(strong)

    def critic_objected(self) -> bool:
        """Did the critic log a disagreement during the meeting?"""
        return any(d["role"] == self.settings.critic_role for d in self.disagreements)

    def _synthesis_message(self) -> str:
        parts = [f"You chaired a board meeting on: {self.topic}", f"Agenda:\n{self.agenda}"]
        for number, statements in enumerate(self.rounds, start=1):
            lines = "\n".join(f"- {self.profiles[r].name} ({r}): {abridge(t, self.settings.abridge_chars)}"
                              for r, t in statements.items())
            parts.append(f"Round {number}:\n{lines}")
        if self.disagreements:
            parts.append("Disagreements logged:\n" + "\n".join(
                f"- {d['role']} vs {d['target']} on {d['topic']} (severity {d['severity']}): {d['reasoning']}"
                for d in self.disagreements))
        if self.consensus:
            parts.append("Consensus logged:\n" + "\n".join(
                f"- {c['topic']}: {', '.join(c['participants'])} (strength {c['strength']})" for c in self.consensus))
        if self.absent:
            parts.append("Absent: " + ", ".join(f"{r} ({why})" for r, why in self.absent.items()))
        owners = [self.chair.role, *[p.role for p in self.specialists]]
        parts.append(
            "Write the board's decision as one JSON object with keys recommendation, rationale, consensus_points "
            "(list of strings), dissent (list of {who, why}: a minority report of everyone who disagreed; never "
            "drop the critic's objections), action_items (3 to 5 of {task, owner} where owner is one of "
            f"{', '.join(owners)}), open_questions (list of strings). JSON only."
        )
        return "\n\n".join(parts)

    async def _decide(self) -> Decision:
        owners = [self.chair.role, *[p.role for p in self.specialists]]
        schema = decision_schema(owners)
        message = self._synthesis_message()
        last_text = ""
        for attempt in (1, 2):
            try:
                utterance = await self._call(self.chair.role, message, schema=schema,
                                             timeout=self.settings.agent_timeout_s)
            except _Stop:
                break
            except Exception as exc:  # noqa: BLE001
                log.warning("meeting %s: synthesis call failed (%s)", self.id, exc)
                break
            if utterance.degraded:  # its text is an apology, not a decision; asking again will not help
                log.warning("meeting %s: the chair's model is unavailable; assembling a best-effort decision", self.id)
                break
            last_text = utterance.text
            try:
                return validate_decision(utterance.text, participants=owners, critic_objected=self.critic_objected(),
                                         critic=self.settings.critic_role)
            except DecisionProblem as problem:
                log.warning("meeting %s: synthesis attempt %d invalid: %s", self.id, attempt, problem)
                message = (f"{self._synthesis_message()}\n\nYour previous answer was not valid: {problem}. "
                           "Reply again with the corrected JSON object only.")
        return self._best_effort(last_text)

    def _best_effort(self, raw: str) -> Decision:
        """A decision assembled from the record when the chair's output was unusable."""
        participants = [p for p in self.specialists if p.role not in self.absent] or self.specialists
        last = self.rounds[-1] if self.rounds else {}
        recommendation = abridge(raw, 400) if raw.strip() else f"No validated recommendation on {self.topic}."
        dissent: dict[str, str] = {}
        for d in self.disagreements:
            dissent.setdefault(d["role"], f"disagreed with {d['target']} on {d['topic']}: {d['reasoning']}")
        items = [ActionItem(task=f"Follow up on {p.name}'s position: "
                                 f"{abridge(last.get(p.role, self.questions.get(p.role, self.topic)), 160)}",
                            owner=p.role) for p in participants[:5]]
        while len(items) < 3:
            items.append(ActionItem(task=f"Bring {self.topic} back to the board with the missing facts",
                                    owner=self.chair.role))
        return Decision(
            recommendation=recommendation,
            rationale="Assembled by Sabha from the meeting record because the chair's decision could not be validated.",
            consensus_points=[c["topic"] for c in self.consensus],
            dissent=[Dissent(who=who, why=why) for who, why in dissent.items()],
            action_items=items,
            open_questions=[f"{r}: {why}" for r, why in self.absent.items()],
            best_effort=True,
        )

    def minutes_context(self, stop_reason: str | None, decision: Decision | None) -> dict[str, Any]:
        """What the minutes template sees."""
        participants = [{"role": p.role, "name": p.name, "emoji": p.emoji,
                         "status": "absent" if p.role in self.absent else "present",
                         "reason": self.absent.get(p.role)} for p in [self.chair, *self.specialists]]
        rounds = [[{"role": r, "name": self.profiles[r].name, "emoji": self.profiles[r].emoji, "text": t}
                   for r, t in statements.items()] for statements in self.rounds]
        return {
            "meeting": {"id": self.id, "topic": self.topic, "roster": self.roster, "started_at": self._started_at,
                        "ended_at": datetime.now(UTC).isoformat(timespec="seconds"), "stop_reason": stop_reason,
                        "cost_usd": self.spent_usd},
            "agenda": self.agenda, "participants": participants, "rounds": rounds, "warnings": self.warnings,
            "disagreements": self.disagreements, "consensus": self.consensus,
            "decision": decision.model_dump() if decision else None,
        }

    # -- the whole meeting -------------------------------------------------------

    async def run(self) -> MeetingResult:
        """Hold the meeting to the end; always records a stop reason."""
        self._deadline = time.monotonic() + self.settings.max_duration_s
        self._started_at = datetime.now(UTC).isoformat(timespec="seconds")
        envelope = self.base_ctx.envelope
        stop = StopReason.COMPLETED
        error: str | None = None
        decision: Decision | None = None
        try:
            # inside the try: a cancel (or /cancel) that lands while the meeting is being
            # recorded must still close it with a stop reason
            await self.store.create(self.id, self.topic, self.roster, self.chair.role,
                                    channel=envelope.channel if envelope else None,
                                    chat_id=envelope.chat_id if envelope else None,
                                    thread_id=envelope.thread_id if envelope else None)
            for p in [self.chair, *self.specialists]:
                await self.store.participant(self.id, p.role, "present")
            await self._emit(MeetingEventKind.STARTED, role=self.chair.role, text=self.topic,
                             participants=[p.role for p in self.specialists])
            await self._frame()
            for round_no in range(1, self.settings.max_turns_per_agent + 1):
                if round_no > 1:
                    self._check_limits()
                await self._speak_round(round_no)
                if self.converged():
                    stop = StopReason.CONVERGED
                    break
        except _Stop as halt:
            stop, error = halt.reason, halt.detail
            log.info("meeting %s: stopping (%s: %s)", self.id, halt.reason, halt.detail)
        except asyncio.CancelledError:
            await asyncio.shield(self._close(StopReason.CANCELLED, None, "cancelled"))
            raise
        except Exception as exc:  # record it, never leave a meeting open
            log.exception("meeting %s failed", self.id)
            stop, error = StopReason.ERROR, f"{type(exc).__name__}: {exc}"
        try:
            if any(self.rounds):  # nobody spoke: nothing to decide on, and nothing to invent
                decision = await self._decide() if stop not in (StopReason.BUDGET, StopReason.DEADLINE) \
                    else self._best_effort("")
        except asyncio.CancelledError:
            await asyncio.shield(self._close(StopReason.CANCELLED, None, "cancelled"))
            raise
        return await self._close(stop, decision, error)

    async def _close(self, stop: StopReason, decision: Decision | None, error: str | None) -> MeetingResult:
        minutes = self.render_minutes(self.minutes_context(stop.value, decision))
        await self.store.finish(self.id, stop_reason=stop.value, cost_usd=self.spent_usd,
                                decision=decision.model_dump() if decision else None, minutes=minutes, error=error)
        if decision is not None:
            await self.store.event(self.id, "decision", self.chair.role, decision.model_dump(), self.current_round)
            await self._emit(MeetingEventKind.DECISION, role=self.chair.role, text=decision.recommendation,
                             decision=decision.model_dump())
        await self._emit(MeetingEventKind.ENDED, role=self.chair.role, text=stop.value, stop_reason=stop.value,
                         error=error, minutes=minutes)
        return MeetingResult(meeting_id=self.id, topic=self.topic, stop_reason=stop, decision=decision,
                             minutes=minutes, cost_usd=self.spent_usd, rounds=len(self.rounds),
                             absent=dict(self.absent), error=error)
