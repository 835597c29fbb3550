"""Phase 2: the rounds. Each specialist speaks, with a stance; the round ends when all have.

Round 1 is independent (in parallel by default); from round 2 each member sees the agenda,
its own earlier statements in full and the others' latest ones (abridged at sentence
boundaries that keep the conclusion; in sequential mode also the earlier speakers of the same
round) and answers named points. A member's disagreements and consensus travel in the same
statement (see :mod:`board.room.meeting.scoreboard`), so a round is one model call per member.
A statement without a valid stance is asked for it once. A member that fails or times out is
absent; the meeting goes on while a quorum is present. After round 1 the peer review runs
(when configured); a unanimous round 1 makes round 2 the case against.

Each statement is stored with the meeting's checkpoint, and so is the end of each round
(:mod:`board.room.meeting.resume`): a meeting resumed after a restart starts at its first unfinished
round and asks in it only the members that had not spoken. The writes are queued in order (a member's task
does not wait for its own; statements that finish together are stored together) and shown once stored; the round
ends once its statements are stored, and the round's end is stored behind the next round's first calls.
"""

from __future__ import annotations

import asyncio
import logging
import math
from dataclasses import dataclass, field

from board.room.decision import (
    PREDICTION_INSTRUCTION,
    STANCE_SCHEMA,
    DecisionProblem,
    Stance,
    format_stance,
    parse_stance,
    split_stance,
)
from board.room.evidence import evidence_block
from board.room.meeting.cited import capped, evidence_of, outside_tools, tools_line
from board.room.meeting.cited import record as record_evidence
from board.room.meeting.context import MeetingContext
from board.room.meeting.convergence import (
    abridge,
    latest_statement,
    models_differ,
    present,
    settle_consensus,
    unanimous,
)
from board.room.meeting.events import MeetingEventKind, Stop, StopReason
from board.room.meeting.limits import Limits, ask, in_phase
from board.room.meeting.resume import check_writes, queue_statement, save_later, settle_writes
from board.room.meeting.review import run as peer_review
from board.room.meeting.scoreboard import SCOREBOARD_INSTRUCTION, meeting_tools, record_stated
from board.room.meeting.seat import between_rounds, rounds_at_most, table_block
from board.room.meeting.state import MeetingState
from board.telemetry.genai import ROLE
from board.telemetry.spans import traced
from board.workspace.souls import AgentProfile

__all__ = ["STANCE_INSTRUCTION", "Said", "heard", "round_message", "run_all", "speak_round"]

log = logging.getLogger("sabha.meeting")

STANCE_INSTRUCTION = (
    'End with one line: STANCE: {"position": "support" | "oppose" | "conditional", "confidence": 0 to 1, '
    '"assumption": "the one assumption your position rests on"}. ' + PREDICTION_INSTRUCTION
)


@dataclass
class Said:
    """What one round has heard so far: statements and stances by role."""

    statements: dict[str, str] = field(default_factory=dict)
    stances: dict[str, Stance | None] = field(default_factory=dict)

    def so_far(self) -> dict[str, tuple[str, Stance | None]]:
        """The same round's earlier speakers (sequential mode)."""
        return {r: (self.statements[r], self.stances.get(r)) for r in self.statements}


def heard(m: MeetingContext, role: str, text: str, stance: Stance | None, round_no: int | None = None) -> str:
    """One colleague's statement as another member sees it: abridged, with its stance."""
    profile = m.profiles[role]
    when = f", round {round_no}" if round_no is not None else ""
    return (f"- {profile.name} ({role}){when}: {abridge(text, m.settings.abridge_chars)} "
            f"[stance: {format_stance(stance)}]")


def _colleagues(m: MeetingContext, s: MeetingState, profile: AgentProfile, round_no: int,
                same_round: dict[str, tuple[str, Stance | None]] | None) -> list[str]:
    out = []
    for other in m.specialists:
        if other.role == profile.role or (same_round and other.role in same_round):
            continue
        latest = latest_statement(s, other.role, round_no)
        if latest is not None:
            number, text = latest
            out.append(heard(m, other.role, text, s.stances[number - 1].get(other.role), number))
    return out


def round_message(m: MeetingContext, s: MeetingState, profile: AgentProfile, round_no: int,
                  same_round: dict[str, tuple[str, Stance | None]] | None = None, *, tools_note: str = "") -> str:
    """What ``profile`` is asked in ``round_no`` (a pure function of the record; ``tools_note``: what it is
    told of its outside tools, :func:`board.room.meeting.cited.tools_line`)."""
    parts = [f"Board meeting on: {m.topic}\nAgenda:\n{s.agenda}",
             f"Round {round_no} of at most {rounds_at_most(m, s)}. "
             f"The chair asked you: {s.questions[profile.role]}"]
    if m.evidence:
        parts.append(evidence_block(m.evidence))
    if tools_note:
        parts.append(tools_note)
    if profile.role == m.challenger:
        parts.append("You are this meeting's challenger: find the objection nobody wants to hear, and do not "
                     "agree for the sake of agreeing.")
    own = [(n, r[profile.role]) for n, r in enumerate(s.rounds[: round_no - 1], start=1) if profile.role in r]
    if own:
        parts.append("Your earlier statements (in full):\n" + "\n\n".join(
            f"Round {n}: {text}\n(your stance then: {format_stance(s.stances[n - 1].get(profile.role))})"
            for n, text in own))
    if colleagues := _colleagues(m, s, profile, round_no, same_round):
        parts.append("What your colleagues said most recently:\n" + "\n".join(colleagues))
    if same_round:
        parts.append("Already said in this round:\n" + "\n".join(
            heard(m, role, text, stance) for role, (text, stance) in same_round.items()))
    if at_table := table_block(m, s, profile, round_no):  # the owner at the table (board.room.meeting.seat)
        parts.append(at_table)
    if round_no == 1 and not same_round:
        parts.append("Answer independently, in your own voice, in under 200 words. " + STANCE_INSTRUCTION)
    elif round_no == s.challenge_round:
        parts.append("Round 1 was unanimous. Before the board may declare convergence, make the strongest case "
                     "AGAINST the position you supported: the assumption most likely to be wrong and what "
                     "happens to us if it is. Then say whether you still hold your position. Under 150 words. "
                     + STANCE_INSTRUCTION)
    else:
        parts.append("Respond to specific points, naming the colleague you answer. " + SCOREBOARD_INSTRUCTION
                     + " If you have nothing new, say so in one sentence. Under 150 words. " + STANCE_INSTRUCTION)
    return "\n\n".join(parts)


async def _ask_stance(limits: Limits, role: str, text: str, problem: str) -> Stance | None:
    """One request for the stance a statement left out (or got wrong); None if still missing."""
    m = limits.m
    if not limits.spare():
        return None
    message = (f"Board meeting on: {m.topic}\nYou just said:\n{text}\n\nYour statement needs a stance "
               f"({problem}). Give it as one JSON object: position (support, oppose or conditional), "
               "confidence (0 to 1) and the one assumption it rests on.")
    try:
        utterance = await ask(limits, role, message, schema=STANCE_SCHEMA)
        return None if utterance.degraded else parse_stance(utterance.text)
    except (Stop, DecisionProblem, TimeoutError) as exc:
        log.info("meeting %s: %s gave no usable stance (%s)", m.id, role, exc)
    except Exception as exc:  # noqa: BLE001 - a missing stance must not cost the statement
        log.warning("meeting %s: asking %s for a stance failed (%s)", m.id, role, exc)
    return None


async def _mark_absent(m: MeetingContext, s: MeetingState, profile: AgentProfile, reason: str) -> None:
    log.warning("meeting %s: %s is absent (%s)", m.id, profile.role, reason)
    s.absent[profile.role] = reason
    await m.store.participant(m.id, profile.role, "absent", reason)
    await m.emit(MeetingEventKind.ABSENT, s.current_round, role=profile.role, text=reason)


@traced("meeting.seat", lambda limits, profile, round_no, said: {ROLE: profile.role, "sabha.round": round_no})
async def _speak(limits: Limits, profile: AgentProfile, round_no: int, said: Said) -> None:
    """One member's statement in ``round_no``: asked, recorded, stored and shown."""
    m, s = limits.m, limits.s
    same_round = None if m.settings.parallel else said.so_far()
    await m.emit(MeetingEventKind.SPEAKING, round_no, role=profile.role, text=f"{profile.name} is speaking")
    looks = await outside_tools(m, profile.role)
    message = round_message(m, s, profile, round_no, same_round, tools_note=tools_line(m, s, looks))
    try:
        utterance = await ask(limits, profile.role, message, tools=None,
                              extra_tools=(*meeting_tools(m, s), *capped(m, s, looks)))
    except (Stop, asyncio.CancelledError):
        raise
    except TimeoutError:
        await _mark_absent(m, s, profile, f"timed out after {m.settings.agent_timeout_s:g} s")
        return
    except Exception as exc:  # noqa: BLE001 - one failing specialist must not end the meeting
        await _mark_absent(m, s, profile, f"failed: {exc}")
        return
    if utterance.degraded:
        await _mark_absent(m, s, profile, "the model was unavailable")
        return
    used = evidence_of(utterance.tool_events, profile.role, round_no, utterance.text)
    await record_evidence(m, s, used)
    body, stance, problem = split_stance(await record_stated(m, s, profile.role, utterance.text))
    if stance is None:
        stance = await _ask_stance(limits, profile.role, body, problem or "missing")
    said.statements[profile.role] = body
    said.stances[profile.role] = stance
    if utterance.model:
        s.spoke_with[profile.role] = utterance.model
    dumped = stance.model_dump() if stance is not None else None
    stored = queue_statement(m, s, round_no, profile.role, body, stance, model=utterance.model,
                             cost_usd=utterance.cost_usd)
    # shown once it is stored; the round (and the next one) does not wait for the write
    await m.emit(MeetingEventKind.AGENT_SPOKE, s.current_round, role=profile.role,
                 text=f"{body}\n\nStance: {format_stance(stance)}", statement=body, stance=dumped,
                 model=utterance.model, models_differ=models_differ(m, s), evidence=[e.label for e in used],
                 after=stored)


def _keep(m: MeetingContext, s: MeetingState, said: Said) -> None:
    """The round's statements and stances, in roster order."""
    s.rounds.append({p.role: said.statements[p.role] for p in m.specialists if p.role in said.statements})
    s.stances.append({p.role: said.stances.get(p.role) for p in m.specialists if p.role in said.statements})


async def _all_speak(limits: Limits, round_no: int, said: Said) -> None:
    # a round resumed after a restart asks only the members that had not spoken (their statements are in ``said``)
    speakers = [p for p in present(limits.m, limits.s) if p.role not in said.statements]
    with in_phase(f"round {round_no}"):
        await _each_speaks(limits, round_no, said, speakers)


async def _each_speaks(limits: Limits, round_no: int, said: Said, speakers: list[AgentProfile]) -> None:
    if limits.m.settings.parallel:
        limits.s.pace.phase(len(speakers))
        results = await asyncio.gather(*(_speak(limits, p, round_no, said) for p in speakers),
                                       return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
    else:
        for profile in speakers:
            limits.s.pace.phase(1)
            await _speak(limits, profile, round_no, said)


async def speak_round(limits: Limits, round_no: int) -> None:
    """One round: everyone present speaks; consensus settled; quorum checked; the round shown."""
    m, s = limits.m, limits.s
    s.current_round = round_no
    said = Said()  # what the round heard before a restart, if it was cut off by one (stored, shown, not asked again)
    for role, (text, stance) in s.partial.items():
        said.statements[role], said.stances[role] = text, stance
    try:
        await _all_speak(limits, round_no, said)
        # the round's statements are stored before anything of the next phase is asked: a kill never costs a
        # finished statement (the round's end itself is stored behind: resumed, a round whose members all spoke
        # asks nobody again)
        await settle_writes(m, s)
    except BaseException:
        # a round cut short (deadline, budget, cancel) keeps what was said: it is stored,
        # was shown to the channels, and belongs in the minutes
        if said.statements:
            _keep(m, s, said)
        raise
    _keep(m, s, said)
    s.partial = {}
    settle_consensus(m, s, round_no)
    needed = max(1, math.ceil(len(m.specialists) * m.settings.quorum))
    if len(present(m, s)) < needed:
        raise Stop(StopReason.ERROR, f"no quorum: {len(present(m, s))} of {len(m.specialists)} specialists "
                                     f"present, {needed} needed")
    note = ""
    if round_no == 1 and unanimous(s, 1) and m.settings.max_turns_per_agent > 1:
        s.challenge_round = 2
        note = "; round 1 was unanimous, so round 2 asks each member for the strongest case against"
    done = save_later(m, s)  # the round is done: a restart resumes after it (stored after its statements)
    await m.emit(MeetingEventKind.ROUND_DONE, s.current_round, text=f"round {round_no} done{note}",
                 spoke=list(s.rounds[-1]), stances={r: format_stance(st) for r, st in s.stances[-1].items()},
                 after=done)


async def run_all(limits: Limits) -> StopReason:
    """Round after round (the peer review after round 1) until the boundary after one says how they end
    (:func:`board.room.meeting.seat.between_rounds`: converged, wrapped, the last round; the owner's
    controls applied and contributions read there). A meeting resumed after a restart goes on after its last
    finished round (board.room.meeting.resume)."""
    m, s = limits.m, limits.s
    round_no = len(s.rounds)
    if s.rounds and m.settings.peer_review and not s.reviewed:  # resumed before its peer review was stored
        await peer_review(limits)
    while True:
        check_writes(m, s)  # a write of the last round failed, or another replica holds the meeting now: stop
        if (stop := await between_rounds(limits, round_no)) is not None:
            return stop
        round_no += 1
        if round_no > 1:
            limits.check()
        await speak_round(limits, round_no)
        if round_no == 1 and m.settings.peer_review:
            await peer_review(limits)
