"""A meeting that survives a restart: its checkpoint, what rebuilding it takes, where it resumes.

Each finished phase is stored when it ends (:func:`save`): the framing (agenda and questions), each member's
statement (with the statement's own row, in one transaction: :meth:`board.room.store.MeetingStore.statement`),
the end of each round, the peer review, the chair's synthesis and the challenger's objection. The checkpoint is
the whole :class:`~board.room.meeting.state.MeetingState` as JSON (rounds, stances, the unfinished round's
statements, absent members, disagreements and consensus, tool evidence, spent_usd, the case-against round, the
contributions read so far ...), so :func:`restore` gives a resumed meeting exactly the state it had.

What rebuilding the fixed :class:`~board.room.meeting.context.MeetingContext` takes is written with the
meeting's row (:func:`spec`): the roster and chair, the origin envelope (channel, chat, thread, sender, whether
a group), its settings (a web-started meeting's own, or the board's), the evidence, the decision it
revisits, the agenda given in advance and the extra action owners. :class:`Resumable` is that row read back.

:func:`resume_phase` names where a checkpoint resumes (the RESUMED event's ``phase``): ``framing``,
``round N`` (its members that had not spoken yet), ``peer review``, ``synthesis`` or ``closing``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from typing import Any

from board.decisions.predictions.recording import StakedClaim, predictions_writer, staked_claim
from board.envelope import Envelope
from board.media.attachment import MediaKind
from board.room.decision import Decision, Stance
from board.room.evidence import Evidence
from board.room.meeting.context import MeetingContext
from board.room.meeting.events import ToolEvidence
from board.room.meeting.lease import MeetingTakenOver
from board.room.meeting.state import MeetingState
from board.room.settings import MeetingSettings
from board.room.store import Checkpoint, StatementRow
from board.room.table import Contribution

__all__ = ["Resumable", "age_s", "check_writes", "lost", "queue_statement", "restore", "resume_phase", "save",
           "save_later", "settings_of", "settle_writes", "snapshot", "spec"]

log = logging.getLogger("sabha.meeting")

#: The origin envelope's fields kept with the meeting (enough to show it in its place and to hold it to the
#: same terms: who called it, from where).
_ORIGIN = ("channel", "text", "sender", "chat_id", "thread_id", "message_id", "sender_name", "is_group", "is_owner",
           "is_public", "role_hint")


def _stance(raw: Any) -> Stance | None:
    return Stance.model_validate(raw) if raw else None


def _dumped(stance: Stance | None) -> dict[str, Any] | None:
    return stance.model_dump() if stance is not None else None


def snapshot(s: MeetingState) -> dict[str, Any]:
    """The state as JSON-ready data (everything but the live fields: ``recorded``, ``deadline``, ``suspended``)."""
    return {
        "agenda": s.agenda, "questions": s.questions, "rounds": s.rounds,
        "stances": [{r: _dumped(st) for r, st in stances.items()} for stances in s.stances],
        "challenge_round": s.challenge_round, "peer_ranking": s.peer_ranking, "spoke_with": s.spoke_with,
        "absent": s.absent, "disagreements": s.disagreements, "consensus": s.consensus, "spent_usd": s.spent_usd,
        "current_round": s.current_round, "warnings": s.warnings, "started_at": s.started_at,
        "tool_calls": s.tool_calls, "cited": [asdict(e) for e in s.cited],
        "contributions": [asdict(c) for c in s.contributions], "extra_rounds": s.extra_rounds, "wrap": s.wrap,
        "partial": {r: [text, _dumped(st)] for r, (text, st) in s.partial.items()},
        "reviewed": s.reviewed, "draft": s.draft.model_dump() if s.draft is not None else None,
        "objected": s.objected, "objection": s.objection,
    }


def restore(data: dict[str, Any]) -> MeetingState:
    """The state a checkpoint holds, marked resumed."""
    s = MeetingState(
        agenda=data.get("agenda", ""), questions=dict(data.get("questions") or {}),
        rounds=[dict(r) for r in data.get("rounds") or []],
        stances=[{r: _stance(st) for r, st in stances.items()} for stances in data.get("stances") or []],
        challenge_round=data.get("challenge_round"), peer_ranking=list(data.get("peer_ranking") or []),
        spoke_with=dict(data.get("spoke_with") or {}), absent=dict(data.get("absent") or {}),
        disagreements=list(data.get("disagreements") or []), consensus=list(data.get("consensus") or []),
        spent_usd=float(data.get("spent_usd") or 0.0), current_round=int(data.get("current_round") or 0),
        warnings=list(data.get("warnings") or []), started_at=data.get("started_at") or "",
        tool_calls=int(data.get("tool_calls") or 0), cited=[ToolEvidence(**e) for e in data.get("cited") or []],
        contributions=[Contribution(**c) for c in data.get("contributions") or []],
        extra_rounds=int(data.get("extra_rounds") or 0), wrap=bool(data.get("wrap")), resumed=True,
        partial={r: (text, _stance(st)) for r, (text, st) in (data.get("partial") or {}).items()},
        reviewed=bool(data.get("reviewed")), objected=bool(data.get("objected")), objection=data.get("objection"),
        draft=Decision.model_validate(data["draft"]) if data.get("draft") else None,
    )
    s.recorded.set()  # its row and participants were stored before the stop
    return s


def resume_phase(s: MeetingState, settings: MeetingSettings) -> str:
    """The first unfinished phase of a (restored) state, as the RESUMED event and the log say it."""
    if not s.agenda:
        return "framing"
    if s.partial:
        return f"round {len(s.rounds) + 1}"
    if s.rounds and settings.peer_review and not s.reviewed:
        return "peer review"
    if s.draft is not None and s.objected:
        return "closing"
    if s.draft is not None or s.objected or len(s.rounds) >= settings.max_turns_per_agent + s.extra_rounds:
        return "synthesis"
    return f"round {len(s.rounds) + 1}"


async def save(m: MeetingContext, s: MeetingState) -> None:
    """Store the checkpoint now (a phase just ended) and wait for it; fenced by the meeting's lease with replicas
    (:class:`~board.room.meeting.lease.MeetingTakenOver` when another replica runs it now)."""
    if not await save_later(m, s):
        lost(m)


def save_later(m: MeetingContext, s: MeetingState) -> asyncio.Future[bool]:
    """Queue the checkpoint of the state as it is now; the future says whether it was stored (False: the fence
    did not hold or the meeting ended). The meeting goes on meanwhile (:func:`check_writes`)."""
    return _queue(m, s, None, None)


def queue_statement(m: MeetingContext, s: MeetingState, round_no: int, role: str, body: str, stance: Stance | None,
                    *, model: str | None, cost_usd: float) -> asyncio.Future[bool]:
    """Queue a member's statement, its prediction (if its stance makes one) and the checkpoint that has it (the
    round's statements so far are ``s.partial``), to be stored in one transaction, fenced like :func:`save`: a
    restart finds all or none. The future is done once it is stored (show it then: ``emit(..., after=...)``).

    Writes are queued with the state as it is when they are queued and written in that order, by one writer
    task per meeting; statements that come in while a write is under way are stored together (a group commit:
    one transaction and one checkpoint for the statements of a round that ended at about the same time). Every
    checkpoint stored is one the meeting was in. A round waits for its statements' writes before the next phase
    is asked anything (:func:`settle_writes`); its end's checkpoint (:func:`save_later`) is stored behind."""
    s.partial[role] = (body, stance)
    row = StatementRow(round_no, role, body, model=model, cost_usd=cost_usd, stance=_dumped(stance))
    return _queue(m, s, row, staked_claim(m.id, round_no, role, stance, model=model, now=m.clock.now()))


@dataclass
class _Queued:
    """A write waiting for the meeting's writer: a statement (or none: a checkpoint alone) and the state then."""

    row: StatementRow | None
    prediction: StakedClaim | None
    state: dict[str, Any]
    done: asyncio.Future[bool]


def _queue(m: MeetingContext, s: MeetingState, row: StatementRow | None,
           prediction: StakedClaim | None) -> asyncio.Future[bool]:
    loop = asyncio.get_running_loop()
    item = _Queued(row, prediction, snapshot(s), loop.create_future())
    s.writes.append(item.done)
    if s.write_error is not None:  # a write failed: nothing after it is stored (its state holds what failed)
        item.done.set_exception(s.write_error)
        return item.done
    s.queued.append(item)
    if s.writer is None or s.writer.done():
        s.writer = loop.create_task(_write_queued(m, s), name=f"meeting {m.id} writes")
    return item.done


async def _write_queued(m: MeetingContext, s: MeetingState) -> None:
    """Store what is queued, in order: each batch in one transaction with the latest state queued."""
    async with s.saving:
        while s.queued:
            batch, s.queued = s.queued, []
            predictions = predictions_writer(m.id, [item.prediction for item in batch if item.prediction is not None],
                                             dialect=m.store.db.dialect)  # one INSERT for the batch's predictions
            fence = m.lease.clause() if m.lease is not None else None
            checkpoint = Checkpoint(batch[-1].state, fence, predictions)
            try:
                stored = await m.store.statements(m.id, [item.row for item in batch if item.row is not None],
                                                  checkpoint=checkpoint)
            except BaseException as exc:
                failed = exc if isinstance(exc, Exception) else RuntimeError(f"stopped while storing ({exc!r})")
                s.write_error = failed
                for item in [*batch, *s.queued]:
                    if not item.done.done():
                        item.done.set_exception(failed)
                s.queued = []
                raise
            for item in batch:
                item.done.set_result(stored)


def check_writes(m: MeetingContext, s: MeetingState) -> None:
    """At a phase boundary: raise what a finished write of the meeting raised, or
    :class:`~board.room.meeting.lease.MeetingTakenOver` when its fence did not hold (:func:`lost`)."""
    pending = []
    for done in s.writes:
        if not done.done():
            pending.append(done)
        elif done.exception() is not None:
            raise done.exception()  # type: ignore[misc]
        elif not done.result():
            lost(m)
    s.writes = pending


async def settle_writes(m: MeetingContext, s: MeetingState) -> None:
    """Until every queued write is stored; then as :func:`check_writes`."""
    if s.writes:
        await asyncio.wait(list(s.writes))
    check_writes(m, s)


def lost(m: MeetingContext) -> None:
    """A fenced write was refused: with a lease, another replica runs the meeting now (raise); without, the
    meeting ended meanwhile (nothing to do)."""
    if m.lease is not None:
        raise MeetingTakenOver(f"meeting {m.id}: another replica holds its lease now")


def _jsonable(value: Any) -> Any:
    return [list(v) if isinstance(v, tuple) else v for v in value] if isinstance(value, tuple) else value


def spec(m: MeetingContext) -> dict[str, Any]:
    """What rebuilding ``m`` takes (stored with the meeting's row). Its settings are kept whole: a resumed
    meeting keeps the limits it started with (a web-started one's own, or the board's of that day)."""
    envelope = m.base_ctx.envelope
    return {
        "chair": m.chair.role,
        "origin": {k: getattr(envelope, k) for k in _ORIGIN} if envelope is not None else None,
        "settings": {f.name: _jsonable(getattr(m.settings, f.name)) for f in fields(m.settings)},
        "evidence": [asdict(e) for e in m.evidence], "revisit_of": m.revisit_of, "preset_agenda": m.preset_agenda,
        "extra_owners": list(m.extra_owners), "background": m.background,
    }


def settings_of(raw: dict[str, Any] | None, board: MeetingSettings) -> MeetingSettings:
    """A stored meeting's settings: its own (:func:`spec`) over the board's current ones."""
    if not raw:
        return board
    known = {f.name for f in fields(MeetingSettings)}
    values: dict[str, Any] = {k: (tuple(tuple(x) if isinstance(x, list) else x for x in v) if isinstance(v, list)
                                  else v) for k, v in raw.items() if k in known}
    return MeetingSettings(**values)


@dataclass(frozen=True)
class Resumable:
    """A meeting still ``running`` on record, read back for resuming."""

    id: str
    topic: str
    roster: str
    started_at: str
    spec: dict[str, Any]
    checkpoint: dict[str, Any] | None

    @classmethod
    def of(cls, row: Any) -> Resumable:
        """From its ``meetings`` row."""
        return cls(id=row["id"], topic=row["topic"], roster=row["roster"], started_at=row["started_at"],
                   spec=json.loads(row["resume"]) if row["resume"] else {},
                   checkpoint=json.loads(row["checkpoint"]) if row["checkpoint"] else None)

    @property
    def chair(self) -> str:
        """Its chair's role."""
        return str(self.spec.get("chair") or "general")

    def origin(self) -> Envelope | None:
        """The message that called it (as much of it as was kept), or None (the terminal's)."""
        raw = self.spec.get("origin")
        if not raw:
            return None
        return Envelope(**{k: v for k, v in raw.items() if k in _ORIGIN})

    def evidence(self) -> tuple[Evidence, ...]:
        """The files it had on its agenda."""
        return tuple(Evidence(**{**e, "kind": MediaKind(e["kind"])}) for e in self.spec.get("evidence") or [])


def age_s(started_at: str, now: datetime) -> float:
    """Seconds since a meeting started (its ``started_at``, UTC ISO)."""
    try:
        start = datetime.fromisoformat(started_at)
    except ValueError:
        log.warning("a meeting's start %r is unreadable; taken as now", started_at)
        return 0.0
    if start.tzinfo is None:
        start = start.replace(tzinfo=UTC)
    return max(0.0, (now - start).total_seconds())
