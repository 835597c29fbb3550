"""Board meetings: the chair frames, specialists speak in rounds, the chair decides.

Flow: the chair frames an agenda and a question per specialist; round 1, every
specialist answers independently (in parallel by default); rounds 2..N, each sees the
agenda again, its own earlier statements in full and the others' latest statements
(abridged at sentence boundaries that keep the conclusion and the stance; in sequential
mode also the earlier speakers of the same round) and must answer named points, logging
disagreements and consensus with the ``log_disagreement`` / ``log_consensus`` tools.

Every statement ends with a structured :class:`~board.room.decision.Stance` (support /
oppose / conditional, confidence, the assumption it rests on); a statement without a
valid one is asked for it once. Convergence is computed from the members' own stances
(everyone present supports, no serious disagreement in the round), never from a
consensus someone logged on others' behalf: a consensus entry holds only for the
participants whose own stance agrees. When round 1 is unanimous, round 2 asks each
member for the strongest case against before convergence may be declared. With
``peer_review`` each member ranks the others' anonymised round-1 statements and the
aggregate goes to the chair and the minutes.

The decision is validated (see :mod:`board.room.decision`): every member whose final
stance is oppose, or who logged a disagreement of severity >= 3 and did not come round
to support, must be in the dissent with their own reasoning; if the chair still leaves
one out, Sabha adds it from their own words and says so. The roster's challenger
(``critic`` on the board, the Investor on ``sabha``; see
:meth:`MeetingSettings.challenger_for`) reviews the draft before it is recorded and may
add a final objection, kept verbatim.

Limits come from :class:`MeetingSettings`: turns per agent, wall-clock duration and a
budget in USD checked before every model call; a meeting a stranger called is also held to
their daily limits (:mod:`board.allowance`), and stops with ``budget`` when a call would
pass one. A specialist that fails or times out is recorded absent and the meeting goes on
while a quorum is present. Every meeting ends with a ``stop_reason``: completed, converged,
budget, deadline, cancelled or error. Progress is published as :class:`MeetingEvent` objects to any subscriber.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import random
import re
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from board.agent.speaker import Ask, Speaker, Utterance
from board.agent.tools import Tool, ToolContext, ToolResult
from board.allowance import SpendRefused
from board.envelope import Envelope
from board.llm.base import ToolSpec
from board.room.decision import (
    STANCE_SCHEMA,
    ActionItem,
    Decision,
    DecisionProblem,
    Dissent,
    FinalObjection,
    Stance,
    cites,
    decision_schema,
    extract_json,
    format_stance,
    parse_stance,
    split_stance,
    validate_decision,
)
from board.room.settings import DEFAULT_CHALLENGERS, MeetingSettings
from board.room.store import MeetingStore
from board.workspace.souls import AgentProfile

__all__ = [
    "DEFAULT_CHALLENGERS",
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

STANCE_INSTRUCTION = (
    'End with one line: STANCE: {"position": "support" | "oppose" | "conditional", "confidence": 0 to 1, '
    '"assumption": "the one assumption your position rests on"}'
)


class StopReason(StrEnum):
    """Why a meeting ended."""

    COMPLETED = "completed"
    CONVERGED = "converged"
    BUDGET = "budget"
    DEADLINE = "deadline"
    CANCELLED = "cancelled"
    ERROR = "error"


class MeetingEventKind(StrEnum):
    """What a :class:`MeetingEvent` reports."""

    STARTED = "started"
    FRAMED = "framed"
    AGENT_SPOKE = "agent_spoke"
    ABSENT = "absent"
    DISAGREEMENT = "disagreement"
    CONSENSUS = "consensus"
    ROUND_DONE = "round_done"
    PEER_REVIEW = "peer_review"
    OBJECTION = "objection"
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


_SENTENCES = re.compile(r"(?<=[.!?])\s+")


def abridge(text: str, limit: int) -> str:
    """Shorten ``text`` to about ``limit`` characters at sentence boundaries, keeping its
    opening and its conclusion (the last sentences, where a mitigation or a verdict sits)."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    sentences = [x for x in _SENTENCES.split(flat) if x]
    if len(sentences) < 2:
        cut = flat[: max(limit - 12, 1)]
        return cut.rstrip() + " (abridged)"
    head: list[str] = []
    tail: list[str] = []
    budget = limit - 14
    # the conclusion first (up to 60% of the room), then the opening
    for sentence in reversed(sentences[1:]):
        if sum(len(x) + 1 for x in tail) + len(sentence) > budget * 0.6 and tail:
            break
        tail.insert(0, sentence)
    used = sum(len(x) + 1 for x in tail)
    for sentence in sentences[: len(sentences) - len(tail)]:
        if used + len(sentence) + 1 > budget and head:
            break
        head.append(sentence)
        used += len(sentence) + 1
    if len(head) + len(tail) >= len(sentences):
        return " ".join(head + tail)
    text_out = " ".join(head) + " [...] " + " ".join(tail)
    if len(text_out) > limit * 1.5:  # one enormous sentence: cut it
        text_out = text_out[: int(limit * 1.5)].rstrip() + "…"
    return text_out + " (abridged)"


def _ranking_lines(ranking: list[dict[str, Any]]) -> str:
    return "\n".join(f"{i}. {r['name']} ({r['role']}): average rank {r['average_rank']} from {r['votes']} review(s)"
                     for i, r in enumerate(ranking, start=1))


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
    extra_owners: tuple[str, ...] = ()  # action-item owners beyond the roster (the roundtable's Director ...)
    models: dict[str, str] = field(default_factory=dict)  # role -> model, to show who spoke with which
    agenda: str = field(default="", init=False)
    questions: dict[str, str] = field(default_factory=dict, init=False)
    rounds: list[dict[str, str]] = field(default_factory=list, init=False)
    stances: list[dict[str, Stance | None]] = field(default_factory=list, init=False)
    challenge_round: int | None = field(default=None, init=False)  # asked for the case against
    peer_ranking: list[dict[str, Any]] = field(default_factory=list, init=False)
    spoke_with: dict[str, str] = field(default_factory=dict, init=False)  # role -> model that answered
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
        except SpendRefused as refused:  # the asker's daily limit (a stranger's public cap): no call was made
            raise _Stop(StopReason.BUDGET, f"today's limit for whoever called it is reached ({refused})") from None
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
        return ToolResult.success({"logged": "consensus", "topic": event["topic"],
                                   "note": "it holds only for the participants whose own stance agrees"})

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

    @property
    def challenger(self) -> str:
        """This meeting's challenger role ("" when none of its members is one)."""
        role = self.settings.challenger_for(self.roster)
        return role if role in {p.role for p in self.specialists} else ""

    def latest_stance(self, role: str) -> Stance | None:
        """The stance ``role`` gave most recently (None: never stated one)."""
        for round_stances in reversed(self.stances):
            if role in round_stances:
                return round_stances[role]
        return None

    def _latest_statement(self, role: str, before_round: int) -> tuple[int, str] | None:
        for number in range(min(before_round, len(self.rounds) + 1) - 1, 0, -1):
            text = self.rounds[number - 1].get(role)
            if text is not None:
                return number, text
        return None

    def _heard(self, role: str, text: str, stance: Stance | None, limit: int, round_no: int | None = None) -> str:
        profile = self.profiles[role]
        when = f", round {round_no}" if round_no is not None else ""
        return f"- {profile.name} ({role}){when}: {abridge(text, limit)} [stance: {format_stance(stance)}]"

    def _round_message(self, profile: AgentProfile, round_no: int,
                       same_round: dict[str, tuple[str, Stance | None]] | None = None) -> str:
        max_rounds = self.settings.max_turns_per_agent
        parts = [f"Board meeting on: {self.topic}\nAgenda:\n{self.agenda}",
                 f"Round {round_no} of at most {max_rounds}. The chair asked you: {self.questions[profile.role]}"]
        if profile.role == self.challenger:
            parts.append("You are this meeting's challenger: find the objection nobody wants to hear, and do not "
                         "agree for the sake of agreeing.")
        own = [(n, r[profile.role]) for n, r in enumerate(self.rounds[: round_no - 1], start=1) if profile.role in r]
        if own:
            parts.append("Your earlier statements (in full):\n" + "\n\n".join(
                f"Round {n}: {text}\n(your stance then: {format_stance(self.stances[n - 1].get(profile.role))})"
                for n, text in own))
        heard = []
        for other in self.specialists:
            if other.role == profile.role:
                continue
            if same_round and other.role in same_round:
                continue
            latest = self._latest_statement(other.role, round_no)
            if latest is not None:
                number, text = latest
                heard.append(self._heard(other.role, text, self.stances[number - 1].get(other.role),
                                         self.settings.abridge_chars, number))
        if heard:
            parts.append("What your colleagues said most recently:\n" + "\n".join(heard))
        if same_round:
            parts.append("Already said in this round:\n" + "\n".join(
                self._heard(role, text, stance, self.settings.abridge_chars)
                for role, (text, stance) in same_round.items()))
        if round_no == 1 and not same_round:
            parts.append("Answer independently, in your own voice, in under 200 words. " + STANCE_INSTRUCTION)
            return "\n\n".join(parts)
        if round_no == self.challenge_round:
            parts.append("Round 1 was unanimous. Before the board may declare convergence, make the strongest case "
                         "AGAINST the position you supported: the assumption most likely to be wrong and what "
                         "happens to us if it is. Then say whether you still hold your position. Under 150 words. "
                         + STANCE_INSTRUCTION)
            return "\n\n".join(parts)
        parts.append(
            "Respond to specific points, naming the colleague you answer. Where you fundamentally disagree, call "
            "log_disagreement; where you see alignment, call log_consensus (it counts only for those whose own "
            "stance agrees). If you have nothing new, say so in one sentence. Under 150 words. " + STANCE_INSTRUCTION)
        return "\n\n".join(parts)

    async def _ask_stance(self, role: str, text: str, problem: str) -> Stance | None:
        """One request for the stance a statement left out (or got wrong); None if still missing."""
        if self.over_budget() is not None or self._remaining() <= 1:
            return None
        message = (f"Board meeting on: {self.topic}\nYou just said:\n{text}\n\nYour statement needs a stance "
                   f"({problem}). Give it as one JSON object: position (support, oppose or conditional), "
                   "confidence (0 to 1) and the one assumption it rests on.")
        try:
            utterance = await self._call(role, message, schema=STANCE_SCHEMA, timeout=self.settings.agent_timeout_s)
            return None if utterance.degraded else parse_stance(utterance.text)
        except (_Stop, DecisionProblem, TimeoutError) as exc:
            log.info("meeting %s: %s gave no usable stance (%s)", self.id, role, exc)
        except Exception as exc:  # noqa: BLE001 - a missing stance must not cost the statement
            log.warning("meeting %s: asking %s for a stance failed (%s)", self.id, role, exc)
        return None

    async def _speak_round(self, round_no: int) -> None:
        self.current_round = round_no
        speakers = self.present()
        statements: dict[str, str] = {}
        stances: dict[str, Stance | None] = {}

        async def one(profile: AgentProfile) -> None:
            same_round = None if self.settings.parallel else {r: (statements[r], stances.get(r)) for r in statements}
            try:
                utterance = await self._call(profile.role, self._round_message(profile, round_no, same_round),
                                             tools=None, extra_tools=self._tools,
                                             timeout=self.settings.agent_timeout_s)
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
            body, stance, problem = split_stance(utterance.text)
            if stance is None:
                stance = await self._ask_stance(profile.role, body, problem or "missing")
            statements[profile.role] = body
            stances[profile.role] = stance
            if utterance.model:
                self.spoke_with[profile.role] = utterance.model
            await self.store.statement(self.id, round_no, profile.role, body, model=utterance.model,
                                       cost_usd=utterance.cost_usd,
                                       stance=stance.model_dump() if stance is not None else None)
            await self._emit(MeetingEventKind.AGENT_SPOKE, role=profile.role,
                             text=f"{body}\n\nStance: {format_stance(stance)}",
                             statement=body, stance=stance.model_dump() if stance else None,
                             model=utterance.model, models_differ=self.models_differ())

        def keep() -> None:  # roster order
            self.rounds.append({p.role: statements[p.role] for p in self.specialists if p.role in statements})
            self.stances.append({p.role: stances.get(p.role) for p in self.specialists if p.role in statements})

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
                keep()
            raise
        keep()
        self._settle_consensus(round_no)
        needed = max(1, math.ceil(len(self.specialists) * self.settings.quorum))
        if len(self.present()) < needed:
            raise _Stop(StopReason.ERROR, f"no quorum: {len(self.present())} of {len(self.specialists)} specialists "
                                          f"present, {needed} needed")
        note = ""
        if round_no == 1 and self.unanimous(1) and self.settings.max_turns_per_agent > 1:
            self.challenge_round = 2
            note = "; round 1 was unanimous, so round 2 asks each member for the strongest case against"
        await self._emit(MeetingEventKind.ROUND_DONE, text=f"round {round_no} done{note}", spoke=list(self.rounds[-1]),
                         stances={r: format_stance(st) for r, st in self.stances[-1].items()})

    def models_differ(self) -> bool:
        """True when members speak with different models (then output names the model)."""
        return len(set(self.models.values()) | set(self.spoke_with.values())) > 1

    def unanimous(self, round_no: int) -> bool:
        """Every member who spoke in ``round_no`` supports (at least two of them)."""
        stances = self.stances[round_no - 1] if 0 < round_no <= len(self.stances) else {}
        return len(stances) >= 2 and all(st is not None and st.position == "support" for st in stances.values())

    def _settle_consensus(self, round_no: int) -> None:
        """A consensus entry holds only for the participants whose own stance agrees."""
        for entry in self.consensus:
            if entry["round"] != round_no:
                continue
            holds: list[str] = []
            rejects: list[str] = []
            for role in entry["participants"]:
                stance = self.latest_stance(role) if role in self.profiles else None
                (holds if stance is not None and stance.position != "oppose" else rejects).append(role)
            entry["holds_for"], entry["not_for"] = holds, rejects

    async def _mark_absent(self, profile: AgentProfile, reason: str) -> None:
        log.warning("meeting %s: %s is absent (%s)", self.id, profile.role, reason)
        self.absent[profile.role] = reason
        await self.store.participant(self.id, profile.role, "absent", reason)
        await self._emit(MeetingEventKind.ABSENT, role=profile.role, text=reason)

    def converged(self) -> bool:
        """Positions have converged when, from round 2 on, every member who spoke in the round supports
        by their own stance and nobody logged a serious disagreement (severity >= 3) in it. Consensus
        logged on others' behalf counts for nothing here."""
        round_no = self.current_round
        if round_no < 2 or (self.challenge_round is not None and round_no < self.challenge_round):
            return False
        serious = [d for d in self.disagreements if d["round"] == round_no and d["severity"] >= 3]
        return not serious and self.unanimous(round_no)

    def _said_by(self, role: str) -> str:
        """Everything ``role`` said in the meeting: statements, disagreements, stance assumptions."""
        parts = [r[role] for r in self.rounds if role in r]
        parts += [d["reasoning"] + " " + d["topic"] for d in self.disagreements if d["role"] == role]
        parts += [st.assumption for r in self.stances for who, st in r.items() if who == role and st is not None]
        return "\n".join(parts)

    def dissenters(self) -> dict[str, str]:
        """Members who must appear in the dissent -> what they said: a final stance of oppose, or an
        unresolved disagreement of severity >= 3 (resolved only by coming round to support)."""
        out: dict[str, str] = {}
        for profile in self.specialists:
            role = profile.role
            final = self.latest_stance(role)
            serious = [d for d in self.disagreements if d["role"] == role and d["severity"] >= 3]
            if (final is not None and final.position == "oppose") or \
                    (serious and (final is None or final.position != "support")):
                out[role] = self._said_by(role)
        return out

    def _dissent_reason(self, role: str) -> str:
        """A dissenter's reasoning in their own words: their serious disagreement, else the conclusion
        of their last statement, with the assumption their stance rests on."""
        serious = [d for d in self.disagreements if d["role"] == role and d["severity"] >= 3]
        latest = self._latest_statement(role, len(self.rounds) + 1)
        stance = self.latest_stance(role)
        if serious:
            why = f"{serious[-1]['reasoning']} (on {serious[-1]['topic']}, severity {serious[-1]['severity']})"
        elif latest is not None:
            why = abridge(latest[1], 320)
        else:
            why = "objected"
        if stance is not None and stance.assumption not in why:
            why += f"; {'opposes' if stance.position == 'oppose' else stance.position}, resting on: {stance.assumption}"
        return why

    def _stance_table(self) -> str:
        lines = []
        for profile in self.specialists:
            history = [f"round {n}: {format_stance(r[profile.role])}" for n, r in enumerate(self.stances, start=1)
                       if profile.role in r]
            if history:
                lines.append(f"- {profile.name} ({profile.role}): " + "; ".join(history))
        return "\n".join(lines)

    def owners(self) -> list[str]:
        """Who may own an action item: the meeting's extra owners (first: the roundtable's Director,
        Builder ...), the chair and the specialists."""
        return [*self.extra_owners, self.chair.role, *[p.role for p in self.specialists]]

    def _synthesis_message(self) -> str:
        parts = [f"You chaired a board meeting on: {self.topic}", f"Agenda:\n{self.agenda}"]
        for number, statements in enumerate(self.rounds, start=1):
            lines = "\n".join(f"- {self.profiles[r].name} ({r}): {abridge(t, self.settings.abridge_chars * 2)}"
                              for r, t in statements.items())
            parts.append(f"Round {number}{' (the case against)' if number == self.challenge_round else ''}:\n{lines}")
        if any(self.stances):
            parts.append("Stances, by the members themselves:\n" + self._stance_table())
        if self.disagreements:
            parts.append("Disagreements logged:\n" + "\n".join(
                f"- {d['role']} vs {d['target']} on {d['topic']} (severity {d['severity']}): {d['reasoning']}"
                for d in self.disagreements))
        if self.consensus:
            parts.append("Consensus logged (it holds only for those whose own stance agrees):\n" + "\n".join(
                f"- {c['topic']}: holds for {', '.join(c.get('holds_for', c['participants'])) or 'nobody'}"
                + (f"; not for {', '.join(c['not_for'])}" if c.get("not_for") else "")
                + f" (strength {c['strength']})" for c in self.consensus))
        if self.peer_ranking:
            parts.append("Peer review of round 1 (anonymised; best first):\n" + _ranking_lines(self.peer_ranking))
        if self.absent:
            parts.append("Absent: " + ", ".join(f"{r} ({why})" for r, why in self.absent.items()))
        dissenters = self.dissenters()
        if dissenters:
            parts.append("Required dissent (each must appear in dissent with their own reasoning):\n" + "\n".join(
                f"- {role}: {json.dumps(self._dissent_reason(role), ensure_ascii=False)}" for role in dissenters))
        parts.append(
            "Write the board's decision as one JSON object with keys recommendation, rationale, consensus_points "
            "(list of strings), dissent (list of {who, why}: a minority report of everyone who opposed or logged a "
            "serious disagreement, each in their own words; never drop an objection), action_items (3 to 5 of "
            f"{{task, owner}} where owner is one of {', '.join(self.owners())}), open_questions (list of strings). "
            "JSON only."
        )
        return "\n\n".join(parts)

    async def _decide(self) -> Decision:
        owners = self.owners()
        participants = [self.chair.role, *[p.role for p in self.specialists]]
        schema = decision_schema(owners)
        dissenters = self.dissenters()
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
                return validate_decision(utterance.text, participants=participants, owners=owners,
                                         dissenters=dissenters)
            except DecisionProblem as problem:
                log.warning("meeting %s: synthesis attempt %d invalid: %s", self.id, attempt, problem)
                message = (f"{self._synthesis_message()}\n\nYour previous answer was not valid: {problem}. "
                           "Reply again with the corrected JSON object only.")
        if last_text:
            try:  # a sound decision that still leaves a dissenter out: keep it, and restore the dissent
                decision = validate_decision(last_text, participants=participants, owners=owners)
            except DecisionProblem:
                pass
            else:
                return self._restore_dissent(decision, dissenters)
        return self._best_effort(last_text)

    def _restore_dissent(self, decision: Decision, dissenters: dict[str, str]) -> Decision:
        """Put every dissenter the chair dropped (or reduced to a placeholder) back, in their own words."""
        kept = [d for d in decision.dissent if d.who not in dissenters or cites(d.why, dissenters[d.who])]
        notes = list(decision.notes)
        for role in dissenters:
            if not any(d.who == role for d in kept):
                kept.append(Dissent(who=role, why=self._dissent_reason(role)))
                notes.append(f"The dissent of {role} was restored by Sabha from their own words: the chair's "
                             "decision left it out or reduced it to a placeholder.")
        return decision.model_copy(update={"dissent": kept, "notes": notes})

    def _best_effort(self, raw: str) -> Decision:
        """A decision assembled from the record when the chair's output was unusable."""
        participants = [p for p in self.specialists if p.role not in self.absent] or self.specialists
        last = self.rounds[-1] if self.rounds else {}
        recommendation = abridge(raw, 400) if raw.strip() else f"No validated recommendation on {self.topic}."
        dissent = [Dissent(who=role, why=self._dissent_reason(role)) for role in self.dissenters()]
        for d in self.disagreements:
            if not any(x.who == d["role"] for x in dissent):
                dissent.append(Dissent(who=d["role"], why=f"disagreed with {d['target']} on {d['topic']}: "
                                                          f"{d['reasoning']}"))
        items = [ActionItem(task=f"Follow up on {p.name}'s position: "
                                 f"{abridge(last.get(p.role, self.questions.get(p.role, self.topic)), 160)}",
                            owner=p.role) for p in participants[:5]]
        while len(items) < 3:
            items.append(ActionItem(task=f"Bring {self.topic} back to the board with the missing facts",
                                    owner=self.chair.role))
        return Decision(
            recommendation=recommendation,
            rationale="Assembled by Sabha from the meeting record because the chair's decision could not be validated.",
            consensus_points=[c["topic"] for c in self.consensus if c.get("holds_for", c["participants"])],
            dissent=dissent,
            action_items=items,
            open_questions=[f"{r}: {why}" for r, why in self.absent.items()],
            best_effort=True,
        )

    async def _challenge(self, decision: Decision) -> Decision:
        """The challenger reviews the draft; a final objection is kept verbatim (and in the dissent)."""
        role = self.challenger
        if not role or role in self.absent or self.over_budget() is not None or self._remaining() <= 1:
            return decision
        draft = [f"Recommendation: {decision.recommendation}", f"Rationale: {decision.rationale}"]
        if decision.dissent:
            draft.append("Dissent: " + "; ".join(f"{d.who}: {d.why}" for d in decision.dissent))
        draft.append("Actions: " + "; ".join(f"{a.task} ({a.owner})" for a in decision.action_items))
        message = (f"Board meeting on: {self.topic}\nYou are this meeting's challenger. The chair's draft decision, "
                   "before it is recorded:\n" + "\n".join(draft) + "\n\nIf you have a final objection the board "
                   "must hear, reply with OBJECTION: and the objection in your own words (under 120 words); it goes "
                   "into the minutes verbatim. Otherwise reply exactly NO OBJECTION.")
        try:
            utterance = await self._call(role, message, tools=(), timeout=self.settings.agent_timeout_s)
        except (_Stop, TimeoutError):
            return decision
        except Exception as exc:  # noqa: BLE001 - the decision stands without the review
            log.warning("meeting %s: the challenger's review failed (%s)", self.id, exc)
            return decision
        text = utterance.text.strip()
        if utterance.degraded or not text or re.match(r"^\W*no objection\b", text, re.IGNORECASE):
            return decision
        match = re.search(r"objection\s*:\s*", text, re.IGNORECASE)
        objection = text[match.end():].strip() if match else text
        if not objection:
            return decision
        await self.store.event(self.id, "objection", role, {"role": role, "text": objection}, self.current_round)
        await self._emit(MeetingEventKind.OBJECTION, role=role, text=objection)
        dissent = list(decision.dissent)
        if not any(d.who == role for d in dissent):
            dissent.append(Dissent(who=role, why=objection))
        return decision.model_copy(update={"final_objection": FinalObjection(who=role, text=objection),
                                           "dissent": dissent})

    async def _peer_review(self) -> None:
        """Each member ranks the others' anonymised round-1 statements; the aggregate is kept."""
        if not self.rounds or len(self.rounds[0]) < 3:
            return
        statements = self.rounds[0]
        order = list(statements)
        random.Random(self.id).shuffle(order)  # labels say nothing about who spoke
        labels = {role: chr(ord("A") + i) for i, role in enumerate(order)}
        by_label = {label: role for role, label in labels.items()}
        votes: dict[str, list[int]] = {role: [] for role in statements}

        async def review(profile: AgentProfile) -> None:
            mine = labels[profile.role]
            shown = [f"Response {labels[r]}: {abridge(statements[r], self.settings.abridge_chars)}"
                     for r in order if r != profile.role]
            others = [labels[r] for r in order if r != profile.role]
            schema = {"type": "object", "additionalProperties": False, "required": ["ranking"],
                      "properties": {"ranking": {"type": "array", "items": {"type": "string", "enum": others},
                                                 "minItems": len(others), "maxItems": len(others)},
                                     "reason": {"type": "string"}}}
            message = (f"Board meeting on: {self.topic}\nPeer review of round 1. Rank your colleagues' anonymised "
                       "answers from most to least useful to the board (accuracy, insight, candour):\n\n"
                       + "\n\n".join(shown) + "\n\nReply with one JSON object: {\"ranking\": [labels, best first], "
                       "\"reason\": \"one sentence\"}.")
            try:
                utterance = await self._call(profile.role, message, schema=schema,
                                             timeout=self.settings.agent_timeout_s)
                data = extract_json(utterance.text)
            except _Stop:
                raise
            except Exception as exc:  # noqa: BLE001 - a missing review is just not counted
                log.info("meeting %s: %s gave no peer review (%s)", self.id, profile.role, exc)
                return
            ranking = data.get("ranking") if isinstance(data, dict) else None
            if not isinstance(ranking, list):
                return
            seen = [x for x in dict.fromkeys(str(x).strip().upper() for x in ranking) if x in by_label and x != mine]
            for position, label in enumerate(seen, start=1):
                votes[by_label[label]].append(position)

        reviewers = [p for p in self.present() if p.role in statements]
        if self.settings.parallel:
            await asyncio.gather(*(review(p) for p in reviewers))
        else:
            for p in reviewers:
                await review(p)
        ranked = sorted(((sum(v) / len(v), role, len(v)) for role, v in votes.items() if v))
        self.peer_ranking = [{"role": role, "name": self.profiles[role].name, "label": labels[role],
                              "average_rank": round(avg, 2), "votes": n} for avg, role, n in ranked]
        if self.peer_ranking:
            await self.store.event(self.id, "peer_review", self.chair.role, {"ranking": self.peer_ranking}, 1)
            await self._emit(MeetingEventKind.PEER_REVIEW, role=self.chair.role,
                             text="peer review: " + ", ".join(r["role"] for r in self.peer_ranking),
                             ranking=self.peer_ranking)

    def minutes_context(self, stop_reason: str | None, decision: Decision | None) -> dict[str, Any]:
        """What the minutes template sees."""
        participants = [{"role": p.role, "name": p.name, "emoji": p.emoji,
                         "status": "absent" if p.role in self.absent else "present",
                         "reason": self.absent.get(p.role)} for p in [self.chair, *self.specialists]]
        show_models = self.models_differ()
        rounds = [[{"role": r, "name": self.profiles[r].name, "emoji": self.profiles[r].emoji, "text": t,
                    "stance": format_stance(stances.get(r)) if stances else None,
                    "model": self.spoke_with.get(r) or self.models.get(r) if show_models else None}
                   for r, t in statements.items()]
                  for statements, stances in zip(self.rounds, self.stances, strict=False)]
        notes = []
        if self.challenge_round is not None and len(self.rounds) >= self.challenge_round:
            notes.append(f"Round 1 was unanimous, so round {self.challenge_round} asked each member for the "
                         "strongest case against before convergence could be declared.")
        return {
            "peer_ranking": self.peer_ranking, "notes": notes, "challenge_round": self.challenge_round,
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
                             participants=[p.role for p in self.specialists], warnings=list(self.warnings),
                             challenger=self.challenger or None, models=dict(self.models))
            await self._frame()
            for round_no in range(1, self.settings.max_turns_per_agent + 1):
                if round_no > 1:
                    self._check_limits()
                await self._speak_round(round_no)
                if round_no == 1 and self.settings.peer_review:
                    await self._peer_review()
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
                if stop in (StopReason.BUDGET, StopReason.DEADLINE):
                    decision = self._best_effort("")
                else:
                    decision = await self._challenge(await self._decide())
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
            await self.store.add_actions(self.id, [(a.task, a.owner) for a in decision.action_items])
            await self._emit(MeetingEventKind.DECISION, role=self.chair.role, text=decision.recommendation,
                             decision=decision.model_dump(),
                             participants=[p.role for p in self.specialists if p.role not in self.absent])
        await self._emit(MeetingEventKind.ENDED, role=self.chair.role, text=stop.value, stop_reason=stop.value,
                         error=error, minutes=minutes)
        return MeetingResult(meeting_id=self.id, topic=self.topic, stop_reason=stop, decision=decision,
                             minutes=minutes, cost_usd=self.spent_usd, rounds=len(self.rounds),
                             absent=dict(self.absent), error=error)
